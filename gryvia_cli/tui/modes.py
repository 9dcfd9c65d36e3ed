"""The app's view modes (`GryviaApp.MODES`): a factory per view that imports its screen the
first time the view is shown, so that starting the console loads only the first view's screen
(the other views' screens, the registry's specs and their cores load when first opened)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from textual.screen import Screen


def jobs() -> Screen[None]:
    """The Jobs view."""
    from gryvia_cli.tui.screens.jobs import JobsScreen

    return JobsScreen()


def queue() -> Screen[None]:
    """The Queue view."""
    from gryvia_cli.tui.screens.queue import QueueScreen

    return QueueScreen()


def capacity() -> Screen[None]:
    """The Capacity view."""
    from gryvia_cli.tui.screens.capacity import CapacityScreen

    return CapacityScreen()


def cost() -> Screen[None]:
    """The Cost view."""
    from gryvia_cli.tui.screens.cost import CostScreen

    return CostScreen()


def nodes() -> Screen[None]:
    """The Nodes view."""
    from gryvia_cli.tui.screens.nodes import NodesScreen

    return NodesScreen()


def submit() -> Screen[None]:
    """The Submit view."""
    from gryvia_cli.tui.screens.submit import SubmitScreen

    return SubmitScreen()


def registry_view(name: str) -> Screen[None]:
    """The list view of registry spec `name` (`screens.registry.ListScreen`)."""
    from gryvia_cli.tui.registry import REGISTRY
    from gryvia_cli.tui.screens.registry import ListScreen  # also registers every spec

    return ListScreen(REGISTRY[name])


def view_modes(registry_views: Sequence[str]) -> dict[str, str | Callable[[], Screen[Any]]]:
    """Every view's mode (typed as Textual's `App.MODES`): the fixed views, then the registry
    views `registry_views`."""
    fixed: dict[str, str | Callable[[], Screen[Any]]] = {
        "jobs": jobs,
        "queue": queue,
        "capacity": capacity,
        "cost": cost,
        "nodes": nodes,
        "submit": submit,
    }
    return fixed | {name: partial(registry_view, name) for name in registry_views}
