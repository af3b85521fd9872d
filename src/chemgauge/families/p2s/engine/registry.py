"""The p2s registries: the systems under test (models) and the property providers, by name.

Models (``--model``) are the family's systems under test, in one
:class:`~chemgauge.registry.Systems` registry (kind ``p2s system``): each factory takes one
:class:`~chemgauge.families.p2s.engine.models.ModelOptions` and returns a
:class:`~chemgauge.families.p2s.engine.models.P2SModel`. Built in: ``structure_only``,
``random``, ``property_oracle`` and ``chat``; third-party packages add theirs through the
entry-point group ``chemgauge.p2s_systems``.

Property providers (``--provider``) compute the evidence a build writes and the oracle
recomputes; they are calculators, not systems under test, and keep their own registry (kind
``property provider``, entry-point group ``chemgauge.property_providers``). Built in:
``table`` (precomputed values), ``xtb`` (GFN2-xTB through tblite: dipole, gap, infrared,
Raman), ``mopac`` (INDO/S-CIS ultraviolet-visible excitations) and ``nmr`` (GIAO-HF proton
and carbon shifts through PySCF).
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
from chemgauge.registry import Registry, Systems

__all__ = [
    "P2S_SYSTEMS",
    "PROPERTY_PROVIDERS",
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


def _structure_only_factory(options: ModelOptions) -> P2SModel:
    return StructureOnlyBaseline()


def _random_factory(options: ModelOptions) -> P2SModel:
    return RandomBaseline(options.seed)


def _oracle_factory(options: ModelOptions) -> P2SModel:
    if options.provider is None:
        raise ConfigError("property_oracle needs a property provider (--provider NAME)")
    return PropertyOracle(options.provider)


def _chat_factory(options: ModelOptions) -> P2SModel:
    if options.chat is None or options.render is None:
        raise ConfigError("the chat model needs --base-url and --chat-model")
    from chemgauge.families.p2s.engine.chat import ChatModel

    return ChatModel(options.chat, options.render)


#: The models ``--model`` names (kind ``p2s system``, entry-point group ``chemgauge.p2s_systems``).
P2S_SYSTEMS: Systems[ModelOptions, P2SModel] = Systems("p2s", P2SModel)
P2S_SYSTEMS.register("structure_only", _structure_only_factory)
P2S_SYSTEMS.register("random", _random_factory)
P2S_SYSTEMS.register("property_oracle", _oracle_factory)
P2S_SYSTEMS.register("chat", _chat_factory)


def get_model(name: str, options: ModelOptions | None = None) -> P2SModel:
    """Build a registered model; unknown names fail with close matches, and a factory that
    returns no :class:`P2SModel` is an error naming it."""
    return P2S_SYSTEMS.build(name, options or ModelOptions())
