"""TableView: a view of RowTables that sort by any column (`shift+<letter>`, the `ctrl+o`
menu, `o` to cycle, `O` to reverse) and hide columns (`ctrl+t`, saved in console.yaml).

Each table keeps a `SortState` in `sorts` (by widget id); the view orders its rows with
`ordered_keys(table_id, keys, value)` in `refresh_view`, and `resort` re-orders after a
change of sort (by default: `refresh_view(None)`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import ClassVar

from textual import events, on
from textual.widget import Widget

from gryvia_cli.tui.bindings import LISTS, bindings
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.screens.dialogs import PickerDialog
from gryvia_cli.tui.sorting import SortState, cycle, ordered, press
from gryvia_cli.tui.userconfig import save_hidden
from gryvia_cli.tui.widgets.rowtable import RowTable

SHOWN, HIDDEN = "✓ ", "✗ "


def table_name(table: RowTable) -> str:
    """The table's name in console.yaml: its id without `-table` (`jobs`, `cost-top`)."""
    return (table.id or "").removesuffix("-table")


class TableView(ViewScreen):
    """A view of sortable tables with column toggles; see the module docstring."""

    BINDINGS: ClassVar = bindings(LISTS)
    SORTS: ClassVar[dict[str, SortState]] = {}
    """The first sort of each table, by widget id."""

    def __init__(self) -> None:
        super().__init__()
        self.sorts: dict[str, SortState] = dict(self.SORTS)

    @on(events.Mount)
    def _tables_mounted(self) -> None:
        config = self.console.user_config.config
        for table in self.query(RowTable):
            table.set_hidden(config.hidden(self.config_name(table)))
            state = self.sorts.get(table.id or "")
            if state is not None:
                table.set_sort(state.column, state.reverse)

    def config_name(self, table: RowTable) -> str:
        """The name `table`'s hidden columns are saved under in console.yaml."""
        return table_name(table)

    # -- ordering --------------------------------------------------------------------------

    def ordered_keys(
        self, table_id: str, keys: Sequence[str], value: Callable[[str, str], Hashable | None]
    ) -> list[str]:
        """`keys` in the order of the sort of table `table_id`; `value(column, key)`."""
        state = self.sorts[table_id]
        return ordered(keys, lambda k: value(state.column, k), state)

    def resort(self, table: RowTable) -> None:
        """Order the rows again after the sort of `table` changed."""
        self.refresh_view(None)

    def sort_table(self) -> RowTable | None:
        """The focused table, else the first sortable one."""
        focused: Widget | None = self.focused
        if isinstance(focused, RowTable) and (focused.id or "") in self.sorts:
            return focused
        for table in self.query(RowTable):
            if (table.id or "") in self.sorts:
                return table
        return None

    def set_sort_state(self, table: RowTable, state: SortState) -> None:
        """Sort `table` as `state` says: header arrow, rows, status."""
        self.sorts[table.id or ""] = state
        table.set_sort(state.column, state.reverse)
        self.resort(table)

    # -- keys ------------------------------------------------------------------------------

    def action_sort_by(self, column: str) -> None:
        """`shift+<letter>`: sort the focused table by `column`; again: reverse."""
        table = self.sort_table()
        if table is None:
            return
        if column not in table.column_keys:
            self.notify(f"this table has no {column} column", severity="warning", timeout=3)
            return
        if column in table.hidden:
            self.notify(f"{column} is hidden (ctrl+t shows it)", severity="warning", timeout=3)
            return
        self.set_sort_state(table, press(self.sorts[table.id or ""], column))

    def action_sort(self) -> None:
        """`o`: sort by the next visible column."""
        table = self.sort_table()
        if table is not None:
            shown = table.visible_columns() or table.column_keys
            self.set_sort_state(table, cycle(self.sorts[table.id or ""], shown))

    def action_reverse(self) -> None:
        """`O`: reverse the order."""
        table = self.sort_table()
        if table is not None:
            state = self.sorts[table.id or ""]
            self.set_sort_state(table, SortState(state.column, not state.reverse))

    def action_sort_menu(self) -> None:
        """`ctrl+o`: pick the column to sort by."""
        table = self.sort_table()
        if table is None:
            return
        state = self.sorts[table.id or ""]
        names = [k for k in table.column_keys if k not in table.hidden]

        def chosen(name: str | None) -> None:
            if name:
                self.set_sort_state(table, press(self.sorts[table.id or ""], name))

        self.app.push_screen(PickerDialog("Sort by", state.column, lambda: names), chosen)

    def action_columns(self) -> None:
        """`ctrl+t`: pick a column to show or hide; saved in console.yaml."""
        table = self.sort_table()
        if table is None:
            return
        names = [(HIDDEN if k in table.hidden else SHOWN) + k for k in table.column_keys]

        def chosen(name: str | None) -> None:
            if name:
                self.toggle_column(table, name[len(SHOWN) :])

        self.app.push_screen(PickerDialog("Show or hide a column", None, lambda: names), chosen)

    def toggle_column(self, table: RowTable, column: str) -> None:
        """Hide `column` of `table` if shown, else show it; keep one column; save."""
        hidden = set(table.hidden) ^ {column}
        if set(table.column_keys) <= hidden:
            self.notify("keep at least one column", severity="warning", timeout=3)
            return
        loaded = self.console.user_config
        try:
            save_hidden(loaded, self.config_name(table), sorted(hidden))
        except OSError as exc:
            self.notify(f"{loaded.path}: {exc}", title="Columns not saved", severity="error")
        if loaded.problems:
            self.notify("fix console.yaml first", title="Columns not saved", severity="warning")
        table.set_hidden(hidden)
        self.resort(table)  # the status line says whether the sorted column is hidden

    def apply_filter(self, text: str) -> None:
        """Put `text` in the view's filter line (shown while it holds text), as `/` would."""
        from gryvia_cli.tui.widgets.filterinput import FilterInput

        for box in self.query(FilterInput):
            if box.id != "command-line":
                box.value = text
                box.set_class(bool(text), "-active")
                return
