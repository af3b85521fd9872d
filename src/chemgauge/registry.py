"""One registry shape for every plugin kind (matchers, models, back-ends, property providers).

Third-party packages add entries through a Python entry-point group; unknown names fail with
a "did you mean" built from the registered names, never a fuzzy pick of another entry.
"""

from __future__ import annotations

import difflib
import importlib
import logging
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar, cast

from chemgauge.errors import ConfigError, UnknownNameError

T = TypeVar("T")
Opt = TypeVar("Opt")
S = TypeVar("S")
log = logging.getLogger(__name__)

__all__ = ["Registry", "Systems", "describe_entries"]


class Registry(Generic[T]):
    """Named entries of one kind, extended by the entry-point group ``chemgauge.<kind>``."""

    def __init__(self, kind: str, *, group: str | None = None) -> None:
        self.kind = kind
        self.group = group or f"chemgauge.{kind}s"
        self._entries: dict[str, T] = {}
        self._lazy: dict[str, str] = {}
        self._plugin_sources: dict[str, str] = {}
        self._plugins_loaded = False

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Add an entry; registering an existing name twice is an error unless ``replace``."""
        if (name in self._entries or name in self._lazy) and not replace:
            raise ConfigError(f"{self.kind} {name!r} is already registered")
        self._lazy.pop(name, None)
        self._entries[name] = entry
        return entry

    def register_lazy(self, name: str, target: str) -> None:
        """Add a built-in entry by its ``module:attribute`` path, imported on first use (a
        command that never looks the entry up never loads its module)."""
        if name in self._entries or name in self._lazy:
            raise ConfigError(f"{self.kind} {name!r} is already registered")
        self._lazy[name] = target
        self._entries[name] = cast(T, None)  # keeps registration order; resolved by get()

    def _resolve(self, name: str) -> T:
        target = self._lazy.pop(name, None)
        if target is not None:
            module, _, attribute = target.partition(":")
            self._entries[name] = getattr(importlib.import_module(module), attribute)
        return self._entries[name]

    def decorator(self, name: str) -> Callable[[T], T]:
        """Register the decorated object under ``name``."""

        def wrap(entry: T) -> T:
            return self.register(name, entry)

        return wrap

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name in self._entries:  # lazily registered built-ins included
                log.warning("plugin %s=%s shadows a built-in %s", ep.name, ep.value, self.kind)
                continue
            try:
                self._entries[ep.name] = ep.load()
                self._plugin_sources[ep.name] = f"plugin {ep.value}"
            except Exception as exc:  # a broken plugin must not break the built-ins
                log.warning("could not load %s plugin %r: %s", self.kind, ep.name, exc)

    def get(self, name: str) -> T:
        """Look an entry up by exact name; unknown names raise with close matches."""
        if name not in self._entries:
            self._load_plugins()
        try:
            return self._resolve(name)
        except KeyError:
            known = self.names()
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            raise UnknownNameError(self.kind, name, close, known) from None

    def names(self) -> list[str]:
        """Registered names in registration order (built-ins first, then plugins)."""
        self._load_plugins()
        return list(self._entries)

    def origin(self, name: str) -> str:
        """Where an entry comes from: ``built in`` or ``plugin module:object`` (entry point)."""
        self.get(name)
        return self._plugin_sources.get(name, "built in")

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


class Systems(Registry[Callable[[Opt], S]]):
    """The systems under test of one family: one factory shape everywhere.

    A factory takes the family's options object (one typed config, e.g. the retro model's
    folder and keyword arguments, an OCSR back-end's command or URL) and returns the system.
    The kind is spelled ``<family> system`` and the entry-point group is
    ``chemgauge.<family>_systems`` for every family.
    """

    def __init__(self, family: str, system_type: type[S] | tuple[type, ...]) -> None:
        super().__init__(f"{family} system", group=f"chemgauge.{family}_systems")
        self.family = family
        self.system_type = system_type

    def build(self, name: str, options: Opt) -> S:
        """Build the system ``name`` from ``options`` (unknown names fail with "did you mean";
        a factory that returns something else is an error naming it)."""
        system: Any = self.get(name)(options)
        if not isinstance(system, self.system_type):
            raise ConfigError(
                f"{self.kind} factory {name!r} returned {type(system).__name__}, "
                f"not a {getattr(self.system_type, '__name__', self.system_type)}"
            )
        return cast(S, system)


def _summary_line(entry: object) -> str:
    claim = getattr(entry, "claim", None)
    if isinstance(claim, str) and claim:
        return claim.split(". ")[0].rstrip(".")
    doc = (getattr(entry, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else "-"


def describe_entries(
    kind: str, registry: Registry[T], lines: dict[str, str] | None = None
) -> list[tuple[str, str, str, str]]:
    """``chemgauge list`` lines of a registry: (kind, name, one line, origin). The one line is
    ``lines[name]`` for a built-in whose object says nothing of itself (a factory), else the
    entry's ``claim`` or the first line of its docstring."""
    lines = lines or {}
    return [
        (kind, name, lines.get(name) or _summary_line(registry.get(name)), registry.origin(name))
        for name in registry.names()
    ]
