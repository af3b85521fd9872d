"""The p2s registries: property providers and models by name, open to plugins.

Built-in providers: ``table`` (precomputed values), ``xtb`` (GFN2-xTB through tblite: dipole,
gap, infrared, Raman), ``mopac`` (INDO/S-CIS ultraviolet-visible excitations) and ``nmr``
(GIAO-HF proton and carbon shifts through PySCF).
Built-in models: ``structure_only``, ``random``, ``property_oracle`` and ``chat``.
Third-party packages add theirs through the entry-point groups
``chemgauge.property_providers`` and ``chemgauge.p2s_models``.
"""

from __future__ import annotations

from collections.abc import Callable

from chemgauge.errors import ConfigError
from chemgauge.families.p2s.engine.models import (
    ModelOptions,
    P2SModel,
    PropertyOracle,
    RandomBaseline,
    StructureOnlyBaseline,
)
from chemgauge.families.p2s.engine.properties import (
    PropertyProvider,
    ProviderOptions,
    TableProvider,
)
from chemgauge.registry import Registry

__all__ = [
    "P2S_MODELS",
    "PROPERTY_PROVIDERS",
    "ModelFactory",
    "ProviderFactory",
    "get_model",
    "get_provider",
]


def _table_factory(options: ProviderOptions) -> PropertyProvider:
    if options.table is None:
        raise ConfigError("the table provider needs a table file (--table FILE)")
    return TableProvider(options.table)


# The calculators' and the chat model's modules are imported by their factories: a command
# that never builds one does not load them.


def _xtb_factory(options: ProviderOptions) -> PropertyProvider:
    from chemgauge.families.p2s.engine.xtb import XtbProvider

    return XtbProvider(seed=options.seed, infrared=options.infrared, raman=options.raman)


def _mopac_factory(options: ProviderOptions) -> PropertyProvider:
    from chemgauge.families.p2s.engine.mopac import MopacProvider

    return MopacProvider(seed=options.seed)


def _nmr_factory(options: ProviderOptions) -> PropertyProvider:
    from chemgauge.families.p2s.engine.nmr import NmrProvider

    return NmrProvider(seed=options.seed)


ProviderFactory = Callable[[ProviderOptions], PropertyProvider]
PROPERTY_PROVIDERS: Registry[ProviderFactory] = Registry(
    "property provider", group="chemgauge.property_providers"
)
PROPERTY_PROVIDERS.register("table", _table_factory)
PROPERTY_PROVIDERS.register("xtb", _xtb_factory)
PROPERTY_PROVIDERS.register("mopac", _mopac_factory)
PROPERTY_PROVIDERS.register("nmr", _nmr_factory)


def get_provider(name: str, options: ProviderOptions | None = None) -> PropertyProvider:
    """Build a registered provider; unknown names fail with close matches."""
    return PROPERTY_PROVIDERS.get(name)(options or ProviderOptions())


def _oracle_factory(options: ModelOptions) -> P2SModel:
    if options.provider is None:
        raise ConfigError("property_oracle needs a property provider (--provider NAME)")
    return PropertyOracle(options.provider)


def _chat_factory(options: ModelOptions) -> P2SModel:
    if options.chat is None or options.render is None:
        raise ConfigError("the chat model needs --base-url and --chat-model")
    from chemgauge.families.p2s.engine.chat import ChatModel

    return ChatModel(options.chat, options.render)


ModelFactory = Callable[[ModelOptions], P2SModel]
P2S_MODELS: Registry[ModelFactory] = Registry("p2s model", group="chemgauge.p2s_models")
P2S_MODELS.register("structure_only", lambda options: StructureOnlyBaseline())
P2S_MODELS.register("random", lambda options: RandomBaseline(options.seed))
P2S_MODELS.register("property_oracle", _oracle_factory)
P2S_MODELS.register("chat", _chat_factory)


def get_model(name: str, options: ModelOptions | None = None) -> P2SModel:
    """Build a registered model; unknown names fail with close matches."""
    return P2S_MODELS.get(name)(options or ModelOptions())
