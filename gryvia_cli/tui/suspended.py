"""The `gryvia` commands the console runs while it is suspended (the Job view's shell and
port-forward keys): their command lines, for the console's own context and kubeconfig."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def gryvia_argv(
    args: Sequence[str], *, namespace: str, context: str, kubeconfig: Path | str | None
) -> list[str]:
    """Return the argv running `gryvia ARGS -n NAMESPACE` with this Python, against
    `context` (empty: the current one) of `kubeconfig` (None: the default file)."""
    argv = [sys.executable, "-m", "gryvia_cli"]
    if kubeconfig:
        argv += ["--kubeconfig", str(kubeconfig)]
    if context:
        argv += ["--context", context]
    return [*argv, *args, "-n", namespace]
