"""Every fixed view's (module, class) in `tui.modes.FIXED_VIEWS` names a Textual screen: the
names are strings (imported when the view is first shown), so a typo would only show there."""

from __future__ import annotations

import importlib

from textual.screen import Screen

from gryvia_cli.tui.modes import FIXED_VIEWS, view_modes


def test_each_fixed_view_names_a_screen_class_and_has_a_mode() -> None:
    for name, (module, cls) in FIXED_VIEWS.items():
        found = getattr(importlib.import_module(module), cls)
        assert isinstance(found, type) and issubclass(found, Screen), (name, found)
    modes = view_modes(["tenants"])
    assert list(modes) == [*FIXED_VIEWS, "tenants"]
