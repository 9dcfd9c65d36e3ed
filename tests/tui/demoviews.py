"""Every console view on a running demo: jump to it with `:` + its name, wait until its tables
show rows, and save a screenshot (160x48). Used by tests/integration/test_demo.py (issue 37:
"the console's every view has rows on a fresh demo")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from gryvia_cli.tui import make_app
from gryvia_cli.tui.keytables import REGISTRY_VIEWS, VIEWS
from gryvia_cli.tui.kubesource import KubeSource
from gryvia_cli.tui.widgets.capacity import NodeGrid
from gryvia_cli.tui.widgets.rowtable import RowTable

SIZE = (160, 48)
SHOWN = tuple(v for v in (*VIEWS, *REGISTRY_VIEWS) if v != "submit")
"""The views that list something (the submit view is a form)."""


def _rows(app: Any, view: str) -> int:
    """Rows of the screen's tables once `view` is the screen shown (the smallest table's
    count, so a view with one empty table of several counts as empty), else 0."""
    screen = app.screen
    if getattr(screen, "view_name", None) != view:
        return 0
    tables = list(screen.query(RowTable))
    if tables:
        return min(len(t.order) for t in tables)
    grids = list(screen.query(NodeGrid))  # the capacity view: one cell per GPU node
    texts = [str(g.content) for g in grids]
    return sum(t.count("\n") + 1 for t in texts if "No GPU nodes" not in t)


async def visit(kubeconfig: Path, out: Path, timeout: float = 60.0) -> dict[str, int]:
    """Open the console on `kubeconfig` (all namespaces), visit every view of `SHOWN` and
    return its row count (0: still empty after `timeout` seconds); each view's screenshot is
    written to `out/<view>.svg`."""
    source = await asyncio.to_thread(KubeSource.open, kubeconfig, None, None, all_namespaces=True)
    app = make_app(source)
    out.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    async with app.run_test(size=SIZE) as pilot:
        for view in SHOWN:
            await pilot.press("colon", *view, "enter")
            deadline = time.monotonic() + timeout
            while not (rows := _rows(app, view)) and time.monotonic() < deadline:
                await pilot.pause(0.2)
            counts[view] = rows
            app.save_screenshot(f"{view}.svg", str(out))
    return counts
