"""The config of each p2s command, one type each, as the command line and the Python API take it.

* :class:`RunConfig`: ``p2s run`` (and :func:`chemgauge.families.p2s.run`): each field is the
  flag of that name, a repeatable flag a tuple (``RunConfig(property=("dipole",))`` is
  ``--property dipole``).
* :class:`BuildConfig`: ``p2s build``: what to build (its fields are recorded in the build
  manifest as they are named here; how the property stage runs, its executor and guards, is
  :class:`~chemgauge.families.p2s.compute.ComputeExecution`, which changes no value but the
  guards' refusals).
* :class:`ClaimConfig`: the use claim's significance level, interval confidence and bootstrap
  (``p2s claim`` and every run report; recorded in the report's ``config.claim``).

Every check names the flag it is about and raises :class:`~chemgauge.errors.ConfigError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chemgauge.errors import ConfigError
from chemgauge.families.p2s.spec import CONDITIONS, PROPERTY_DIRECTORIES

if TYPE_CHECKING:
    from chemgauge.families.p2s.engine.chat import ChatConfig
    from chemgauge.families.p2s.selection import SelectionConfig

__all__ = ["BuildConfig", "ClaimConfig", "RunConfig"]


@dataclass(frozen=True)
class RunConfig:
    """What a p2s run does beyond the model: the flags of ``p2s run``, by the same names.

    Attributes:
        property: the property directories to run (``--property``, repeatable; empty: all).
        condition: the views to run (``--condition``, repeatable; empty: all three).
        seed: the ``random`` baseline's seed.
        provider: the property providers ``property_oracle`` recomputes with, combined in
            this order (``--provider``, repeatable).
        table: the ``table`` provider's file.
        infrared: ``property_oracle`` with ``xtb``: numerical-Hessian IR too.
        raman: ``property_oracle`` with ``xtb``: Raman activities too.
        base_url: the ``chat`` model's OpenAI-compatible endpoint.
        chat_model: the model name the ``chat`` model asks for.
        api_key_env: the environment variable holding the ``chat`` model's key.
        omit_properties: the model sees every task with ``properties`` emptied (the
            structure-only comparison; the folder is ``<model>@no_property``).
        batch_size: tasks per model call.
        restart: discard the journals and start over instead of resuming.
        per_view: present each view's file in turn under its own ids instead of blind
            (the default: every view of a directory interleaved under opaque ids).
    """

    property: tuple[str, ...] = ()
    condition: tuple[str, ...] = CONDITIONS
    seed: int = 0
    provider: tuple[str, ...] = ("xtb",)
    table: Path | None = None
    infrared: bool = False
    raman: bool = False
    base_url: str | None = None
    chat_model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    omit_properties: bool = False
    batch_size: int = 16
    restart: bool = False
    per_view: bool = False

    def __post_init__(self) -> None:
        """No condition means all three; refuse an unknown one and a batch size below 1."""
        if not self.condition:
            object.__setattr__(self, "condition", CONDITIONS)
        bad = [c for c in self.condition if c not in CONDITIONS]
        if bad:
            raise ConfigError(
                f"--condition {bad[0]!r} is not a view; choose from {', '.join(CONDITIONS)}"
            )
        if self.batch_size < 1:
            raise ConfigError(f"--batch-size must be >= 1, got {self.batch_size}")

    def chat(self) -> ChatConfig | None:
        """The ``chat`` model's set-up (``None`` without ``--base-url`` and ``--chat-model``)."""
        if self.base_url is None and self.chat_model is None:
            return None
        if self.base_url is None or self.chat_model is None:
            raise ConfigError("the chat model needs both --base-url and --chat-model")
        from chemgauge.families.p2s.engine.chat import ChatConfig

        return ChatConfig(
            base_url=self.base_url, model=self.chat_model, api_key_env=self.api_key_env
        )


@dataclass(frozen=True)
class BuildConfig:
    """What to build: directories, candidates per task, counterfactuals per record, release.

    ``max_records`` stops the selection after N records; ``records`` keeps the first N
    records of each directory that have every view (exactly N when the sources allow);
    ``draw_sources`` makes each record's source a secret uniform draw among its candidates
    (for sources from a public list, whose membership would otherwise name the answer).
    """

    directories: tuple[str, ...]
    candidates: int = 4
    counterfactuals_per_record: int = 2
    seed: int = 0
    split: str | None = None
    max_records: int | None = None
    records: int | None = None
    draw_sources: bool = False
    min_scaffold_heavy_atoms: int = 4
    audit_alpha: float = 0.05

    def selection(self) -> SelectionConfig:
        """The part of the config that fixes the records."""
        from chemgauge.families.p2s.selection import SelectionConfig  # RDKit: on use only

        return SelectionConfig(
            self.candidates, self.seed, self.split, self.max_records, self.min_scaffold_heavy_atoms
        )

    def __post_init__(self) -> None:
        unknown = [d for d in self.directories if d not in PROPERTY_DIRECTORIES]
        if unknown or not self.directories:
            raise ConfigError(
                f"unknown property directory {unknown[0] if unknown else '(none)'!r}; "
                f"choose from {', '.join(PROPERTY_DIRECTORIES)}"
            )
        if self.candidates < 2:
            raise ConfigError(f"need at least 2 candidates per task, got {self.candidates}")
        if self.records is not None and self.records < 1:
            raise ConfigError(f"--records must be >= 1, got {self.records}")
        if self.counterfactuals_per_record < 1:
            raise ConfigError("need at least 1 counterfactual per record")
        if self.split not in (None, "train", "val", "test"):
            raise ConfigError(f"split must be train, val or test, got {self.split!r}")
        if not 0 < self.audit_alpha < 1:
            raise ConfigError(f"audit alpha must be in (0, 1), got {self.audit_alpha}")


@dataclass(frozen=True)
class ClaimConfig:
    """Significance level, interval confidence and the bootstrap's seed and size."""

    alpha: float = 0.05
    confidence: float = 0.95
    seed: int = 0
    resamples: int = 2000

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ConfigError(f"--alpha must be in (0, 1), got {self.alpha}")
