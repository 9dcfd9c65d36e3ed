"""No module of the product is over 400 lines (the developers' guide: simple and small; issue
35 point 5). Tests are not counted."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gryvia_cli", "gryvia_operator")
LIMIT = 400


def test_no_module_is_over_400_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }
    assert len(sizes) > 100  # the packages were found
    over = {name: n for name, n in sorted(sizes.items()) if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by responsibility): {over}"


def test_the_console_app_stays_under_300_lines() -> None:
    lines = (ROOT / "gryvia_cli" / "tui" / "app.py").read_text().splitlines()
    assert len(lines) < 300, f"gryvia_cli/tui/app.py has {len(lines)} lines"
