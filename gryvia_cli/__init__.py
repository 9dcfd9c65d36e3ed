"""Gryvia's command-line interface and terminal console (the client side)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """`__version__`, read from the installed distribution on first use (keeps start-up fast)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("gryvia")
    except PackageNotFoundError:  # a source tree that was never installed
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
