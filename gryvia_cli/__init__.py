"""Gryvia's command-line interface and terminal console (the client side)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gryvia")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
