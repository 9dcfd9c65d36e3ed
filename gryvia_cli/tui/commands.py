"""Command palette provider: every action of the binding registry as `noun: Verb`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from gryvia_cli.tui.bindings import SCOPES, Key

if TYPE_CHECKING:
    from gryvia_cli.tui.app import GryviaApp

SKIP_SCOPES = frozenset({"table", "confirm", "pods", "costjobs", "list", "describe"})
SCREEN_SCOPES = frozenset({"job", "logs"})


def run_in_view(app: GryviaApp, view: str, action: str) -> None:
    """Show `view`, then run `action` on it."""
    app.action_view(view)
    app.call_after_refresh(lambda: app.screen.run_action(action))


class GryviaCommands(Provider):
    """Lists app actions, the actions of each view (switching to it first) and, on a Job
    view, the job and log actions."""

    def _commands(self) -> Iterator[tuple[Key, Callable[[], object]]]:
        app = cast("GryviaApp", self.app)
        on_job = self.screen.__class__.__name__ == "JobScreen"
        for scope, keys in SCOPES.items():
            if scope in SKIP_SCOPES or scope.endswith("-list"):
                continue  # registry views' sort keys: only on their own view
            if scope in SCREEN_SCOPES and not on_job:
                continue
            for key in keys:
                if key.write and app.readonly:
                    continue
                if scope == "app":
                    yield key, partial(app.run_action, key.action)
                elif scope in SCREEN_SCOPES:
                    yield key, partial(self.screen.run_action, key.action)
                else:
                    yield key, partial(run_in_view, app, scope, key.action)

    async def discover(self) -> Hits:
        """Everything, when nothing is typed yet."""
        for key, callback in self._commands():
            yield DiscoveryHit(key.palette_title, callback, help=key.tooltip)

    async def search(self, query: str) -> Hits:
        """Fuzzy match on the `noun: Verb` titles."""
        matcher = self.matcher(query)
        for key, callback in self._commands():
            score = matcher.match(key.palette_title)
            if score > 0:
                yield Hit(score, matcher.highlight(key.palette_title), callback, help=key.tooltip)
