"""The app's side of console.yaml: user aliases on the `:` line, hotkeys, the tables whose
columns the file may hide, and the warning when the file could not be used."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from textual.app import App
from textual.screen import ModalScreen

from gryvia_cli.tui.bindings import resolve_jump
from gryvia_cli.tui.userconfig import FILTER_VIEWS

if TYPE_CHECKING:
    from gryvia_cli.tui.userconfig import LoadedConfig


@cache
def table_columns() -> dict[str, tuple[str, ...]]:
    """Table name in console.yaml (`columns:`) -> its column keys (the registry views' too).

    Built on first use (`load_console_config` asks only when the file exists): it loads the
    Cost and drill-down views' columns and every registry spec, which starting the console
    without a config file does not need."""
    import gryvia_cli.tui.kinds  # noqa: F401  (registers the view specs)
    from gryvia_cli.tui.drill import COST_JOB_COLUMNS, POD_COLUMNS
    from gryvia_cli.tui.registry import REGISTRY
    from gryvia_cli.tui.rows import JOB_COLUMNS, NODE_COLUMNS, QUEUE_COLUMNS
    from gryvia_cli.tui.screens.cost import TENANT_COLUMNS, TOP_COLUMNS, WORKLOAD_COLUMNS

    return {
        name: tuple(c.key for c in columns)
        for name, columns in {
            "jobs": JOB_COLUMNS,
            "queue": QUEUE_COLUMNS,
            "nodes": NODE_COLUMNS,
            "cost-tenants": TENANT_COLUMNS,
            "cost-top": TOP_COLUMNS,
            "cost-workloads": WORKLOAD_COLUMNS,
            "pods": POD_COLUMNS,
            "costjobs": COST_JOB_COLUMNS,
            **{spec.table_name: spec.columns for spec in REGISTRY.values()},
        }.items()
    }


class UserCommands(App[None]):
    """Aliases and hotkeys of console.yaml (the app keeps the file in `user_config`)."""

    user_config: LoadedConfig

    def jump_to(self, text: str | None) -> None:
        """Go where `:` + `text` says (the app implements it)."""

    def bind_hotkeys(self) -> None:
        """Bind the file's hotkeys (ordinary app keys: a focused input keeps the printable
        keys, and hotkeys are never printable); warn when the file was not used."""
        loaded = self.user_config
        for index, (key, hotkey) in enumerate(loaded.config.hotkeys.items()):
            description = hotkey.description or hotkey.command
            self.bind(key, f"hotkey({index})", description=description, show=False)
        if loaded.problems:
            self.notify(
                "\n".join(loaded.problems) + "\nUsing the defaults; column changes are not saved.",
                title="console.yaml not used",
                severity="warning",
                timeout=20,
                markup=False,
            )

    def action_hotkey(self, index: int) -> None:
        """Run the command of hotkey number `index` (not over a dialog)."""
        if isinstance(self.screen, ModalScreen):
            return
        hotkeys = list(self.user_config.config.hotkeys.values())
        if 0 <= index < len(hotkeys):
            self.jump_to(hotkeys[index].command)

    def run_user_command(self, text: str) -> bool:
        """Handle `text` when it is an alias or a view with filter text (`jobs phase:failed`);
        False when the built-in `:` handling should take it."""
        expanded = self.user_config.config.expand(text)
        word, _, rest = expanded.strip().partition(" ")
        target = resolve_jump(word)
        if rest and target in FILTER_VIEWS:
            self.run_worker(self._view_with_filter(target, rest.strip()), group="jump")
            return True
        if expanded != text.strip():
            self.jump_to(expanded)
            return True
        return False

    def user_keys(self) -> list[tuple[str, str, str]]:
        """(key or `:alias`, command, description) of console.yaml, for the help screen."""
        config = self.user_config.config
        out = [(k, h.command, h.description) for k, h in config.hotkeys.items()]
        return out + [(f":{name}", command, "") for name, command in config.aliases.items()]

    async def _view_with_filter(self, view: str, query: str) -> None:
        from gryvia_cli.tui.screens.tables import TableView

        await self.switch_mode(view)
        screen = self.screen
        if isinstance(screen, TableView):
            screen.apply_filter(query)
