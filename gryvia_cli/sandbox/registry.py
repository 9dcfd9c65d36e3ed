"""An OCI registry in a sandbox (`gryvia sandbox up --registry`): the chart, and the operator
image when `make image` built it, pushed there, so that the FAQ's install line works against
it as written, with the registry's address in place of ghcr.io:

    helm install gryvia oci://127.0.0.1:PORT/charts/gryvia --plain-http \\
      --namespace gryvia-system --create-namespace --set auth.apiKey='a-long-random-secret'

The server is Debian's `docker-registry` package (the CNCF distribution server, 2.8; `make
registry-bin` installs it), listening on 127.0.0.1 at a free port with filesystem storage in
`<workdir>/registry/`; plain HTTP on loopback (helm's `--plain-http`, podman's
`--tls-verify=false`). The address is kept in `<workdir>/registry/address` and the pid in the
sandbox's pids folder, so `down` stops it. `config` is pure; `start`, `push_chart` and
`push_image` do the I/O.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from gryvia_cli.sandbox import binaries
from gryvia_cli.sandbox.ports import free_port
from gryvia_cli.sandbox.sandboxes import Progress, Sandbox, SandboxError

REGISTRY = "registry"
EXECUTABLE = "docker-registry"
IMAGE_REPOSITORY = "gryvia/gryvia-operator"
"""Where the operator image goes in the registry (`<address>/gryvia/gryvia-operator:TAG`)."""


def binary() -> str | None:
    """The `docker-registry` executable (PATH, then Debian's /usr/bin), or None."""
    return binaries.debian_binary(EXECUTABLE)


def missing() -> str:
    """Why the registry cannot run here ('' when it can)."""
    if binary() is None:
        return "docker-registry is not installed: run 'make registry-bin' (Debian's package)"
    return ""


def config(storage: Path, port: int) -> dict[str, Any]:
    """The server's configuration: filesystem storage under `storage`, HTTP on
    127.0.0.1:`port`, deletes allowed (a test can remove what it pushed)."""
    return {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}"},
    }


def address_file(box: Sandbox) -> Path:
    """Where the running registry's `host:port` is kept."""
    return box.workdir / REGISTRY / "address"


def address(box: Sandbox) -> str:
    """`127.0.0.1:PORT` of the sandbox's registry ("" when it has none running)."""
    if not box.alive().get(REGISTRY):
        return ""
    try:
        return address_file(box).read_text().strip()
    except OSError:
        return ""


def start(box: Sandbox, progress: Progress, timeout: float = 30.0) -> str:
    """Start the registry for `box` and wait until it answers `/v2/`; return `host:port`.
    Raises SandboxError when it is not installed, exits, or does not answer in `timeout` s."""
    exe = binary()
    if exe is None:
        raise SandboxError(missing())
    folder = box.workdir / REGISTRY
    (folder / "data").mkdir(parents=True, exist_ok=True)
    port = free_port()
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config(folder / "data", port), sort_keys=False))
    where = f"127.0.0.1:{port}"
    progress(f"starting an OCI registry at {where}")
    proc = box.start(REGISTRY, [exe, "serve", str(path)])
    address_file(box).write_text(where + "\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SandboxError(
                f"the registry exited with {proc.returncode}: see "
                f"{box.workdir / 'logs' / f'{REGISTRY}.log'}"
            )
        try:
            with urllib.request.urlopen(f"http://{where}/v2/", timeout=2) as reply:
                if reply.status == 200:
                    return where
        except OSError:
            pass
        time.sleep(0.1)
    raise SandboxError(f"the registry did not answer within {timeout:.0f}s")


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        raise SandboxError(f"{what} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def push_chart(helm: Path, chart: Path, where: str) -> str:
    """`helm package` `chart` and `helm push` it to `oci://<where>/charts`; return the chart
    reference `oci://<where>/charts/<name>`. Raises SandboxError naming helm's message."""
    with tempfile.TemporaryDirectory(prefix="gryvia-chart-") as tmp:
        _run([str(helm), "package", str(chart), "-d", tmp], "helm package")
        [package] = Path(tmp).glob("*.tgz")
        _run(
            [str(helm), "push", str(package), f"oci://{where}/charts", "--plain-http"], "helm push"
        )
    name = yaml.safe_load((chart / "Chart.yaml").read_text())["name"]
    return f"oci://{where}/charts/{name}"


def push_image(local: str, where: str, tag: str) -> str | None:
    """Push the podman image `local` (e.g. `localhost/gryvia-operator:0.1.0`, what `make
    image` builds) to `<where>/gryvia/gryvia-operator:<tag>`; return that reference, or None
    when podman or the image is not there (nothing pushed). Raises SandboxError when the
    push fails."""
    podman = shutil.which("podman")
    if podman is None:
        return None
    exists = subprocess.run([podman, "image", "exists", local], check=False, timeout=60)
    if exists.returncode != 0:
        return None
    target = f"{where}/{IMAGE_REPOSITORY}:{tag}"
    _run([podman, "push", "--tls-verify=false", local, target], "podman push")
    return target


def publish(box: Sandbox, progress: Progress) -> str:
    """Push this checkout's chart, and the operator image when `make image` built it, to the
    sandbox's registry; return the chart reference. Raises SandboxError when the registry is
    not running or this is not a source checkout (no chart)."""
    from gryvia_cli import __version__

    where = address(box)
    root = binaries.repo_root()
    if not where or root is None:
        raise SandboxError("no registry running, or no chart here (not a source checkout)")
    chart = push_chart(binaries.path_of("helm"), root / "charts" / "gryvia", where)
    progress(f"pushed the chart: {chart}")
    image = push_image(f"localhost/gryvia-operator:{__version__}", where, __version__)
    if image is None:
        progress("no operator image to push: build it with 'make image' (as root)")
    else:
        progress(f"pushed the operator image: {image}")
    return chart
