"""Lazy package exports: every public name resolves to its home module's object, an unknown
name is an AttributeError naming the package, and dir() lists the public names."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "chemgauge.eval",
    "chemgauge.families.forward",
    "chemgauge.families.names",
    "chemgauge.families.ocsr",
    "chemgauge.families.p2s",
    "chemgauge.families.retro",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_its_home_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    homes = module._HOMES
    assert sorted(module.__all__) == sorted(homes)
    for name, home in homes.items():
        owner = importlib.import_module(f"{package}.{home}")
        assert getattr(module, name) is getattr(owner, name)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_names_the_package(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
