"""The app's view modes (`GryviaApp.MODES`): a factory per view that imports its screen the
first time the view is shown, so that starting the console loads only the first view's screen
(the other views' screens, the registry's specs and their cores load when first opened)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from textual.screen import Screen

FIXED_VIEWS: dict[str, tuple[str, str]] = {
    "jobs": ("gryvia_cli.tui.screens.jobs", "JobsScreen"),
    "queue": ("gryvia_cli.tui.screens.queue", "QueueScreen"),
    "capacity": ("gryvia_cli.tui.screens.capacity", "CapacityScreen"),
    "cost": ("gryvia_cli.tui.screens.cost", "CostScreen"),
    "nodes": ("gryvia_cli.tui.screens.nodes", "NodesScreen"),
    "submit": ("gryvia_cli.tui.screens.submit", "SubmitScreen"),
}
"""Each fixed view's screen: (module, class), imported when the view is first shown."""


def fixed_view(name: str) -> Screen[None]:
    """A new screen of fixed view `name` (a key of FIXED_VIEWS), its module imported now."""
    module, cls = FIXED_VIEWS[name]
    screen: Screen[None] = getattr(importlib.import_module(module), cls)()
    return screen


def registry_view(name: str) -> Screen[None]:
    """The list view of registry spec `name` (`screens.registry.ListScreen`)."""
    from gryvia_cli.tui.registry import REGISTRY
    from gryvia_cli.tui.screens.registry import ListScreen  # also registers every spec

    return ListScreen(REGISTRY[name])


def view_modes(registry_views: Sequence[str]) -> dict[str, str | Callable[[], Screen[Any]]]:
    """Every view's mode (typed as Textual's `App.MODES`): the fixed views, then the registry
    views `registry_views`."""
    fixed: dict[str, str | Callable[[], Screen[Any]]] = {
        name: partial(fixed_view, name) for name in FIXED_VIEWS
    }
    return fixed | {name: partial(registry_view, name) for name in registry_views}
