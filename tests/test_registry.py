"""The plugin registry: exact lookups, did-you-mean, entry-point plugins."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from chemgauge import registry as registry_module
from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.registry import Registry


def test_register_get_and_duplicates() -> None:
    reg: Registry[int] = Registry("widget")
    reg.register("alpha", 1)
    assert reg.get("alpha") == 1
    with pytest.raises(ConfigError):
        reg.register("alpha", 2)
    reg.register("alpha", 3, replace=True)
    assert reg.get("alpha") == 3


def test_typo_never_picks_another_entry() -> None:
    reg: Registry[int] = Registry("widget")
    reg.register("top_k", 1)
    reg.register("mrr", 2)
    with pytest.raises(UnknownNameError) as info:
        reg.get("top-k")
    assert info.value.suggestions == ["top_k"]


def test_entry_point_plugins_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = EntryPoint(name="plugged", value="math:pi", group="chemgauge.widgets")
    broken = EntryPoint(name="broken", value="no_such_module:thing", group="chemgauge.widgets")

    def fake_entry_points(group: str) -> list[EntryPoint]:
        return [plugin, broken] if group == "chemgauge.widgets" else []

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    reg: Registry[float] = Registry("widget")
    assert reg.get("plugged") == pytest.approx(3.14159, abs=1e-5)
    assert "broken" not in reg.names()
    reg.register("own", 1.0)
    assert reg.origin("own") == "built in"
    assert reg.origin("plugged") == "plugin math:pi"  # `chemgauge list` shows where it is from
