"""The Kubernetes binaries `sandbox up` and `demo up` need: built on first use, after asking."""

from __future__ import annotations

import sys

import typer

from gryvia_cli.errors import GryviaError
from gryvia_cli.output import info


def ensure_binaries(yes: bool) -> None:
    """Build the Kubernetes binaries the sandbox needs when some are missing: after asking on
    a terminal, at once with `yes`. Raises GryviaError when declined, not asked (no terminal,
    no `yes`) or when the build fails."""
    from gryvia_cli.sandbox import binaries

    missing = binaries.missing()
    if not missing:
        return
    info(f"The Kubernetes binaries are not built yet ({', '.join(missing)}).")
    info("Building them from Go modules takes about 8 minutes on 2 cores, once.")
    if not yes and not (sys.stdin.isatty() and typer.confirm("Build them now?", default=True)):
        raise GryviaError(
            "the sandbox needs the Kubernetes binaries",
            hint="run 'make k8s-bin', or 'gryvia sandbox up --yes' to build them",
        )
    try:
        binaries.build()
    except Exception as exc:
        raise GryviaError(
            f"building the binaries failed: {exc}", hint="see the build output above"
        ) from exc


def ensure_dex(yes: bool) -> None:
    """Build Dex (`tools/k8s/build-dex.sh`, a few minutes) when `sandbox up --oidc` needs it
    and it is missing: after asking on a terminal, at once with `yes`. Raises GryviaError when
    declined, not asked, outside a source tree, or when the build fails."""
    import subprocess

    from gryvia_cli.sandbox import binaries

    if (binaries.bin_dir() / "dex").exists():
        return
    root = binaries.repo_root()
    hint = "run 'tools/k8s/build-dex.sh' (or 'make k8s-bin'), or pass --yes to build it"
    info("--oidc needs Dex, which is not built yet (about 4 minutes on 2 cores, once).")
    if root is None or not (
        yes or (sys.stdin.isatty() and typer.confirm("Build it now?", default=True))
    ):
        raise GryviaError("--oidc needs Dex, which is not built yet", hint=hint)
    try:
        subprocess.run([str(root / "tools" / "k8s" / "build-dex.sh")], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise GryviaError(f"building Dex failed: {exc}", hint="see the build output above") from exc
