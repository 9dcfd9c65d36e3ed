"""`gryvia sandbox`: a real local Kubernetes control plane with simulated GPU nodes.

The pods it runs execute their `command` as local processes; images are not pulled.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

import typer

from gryvia_cli.cli.binaries import ensure_binaries, ensure_dex
from gryvia_cli.cli.options import MergeKubeconfigOpt
from gryvia_cli.errors import GryviaError
from gryvia_cli.output import OutputFormat, default_format, info, render_data, render_table
from gryvia_operator.api.names import CLI_API_VERSION

app = typer.Typer(
    help="Run a local sandbox cluster with simulated GPU nodes.", no_args_is_help=True
)

NameOpt = Annotated[str, typer.Option("--name", help="Sandbox name; its context is gryvia-NAME.")]


@app.command()
def up(
    name: NameOpt = "sandbox",
    nodes: Annotated[
        str,
        typer.Option(
            "--nodes",
            help=(
                "Nodes as COUNTxTYPE[:GPUS],... e.g. 2xH100:8,2xA100-80G:8,1xcpu; "
                "TYPE-MIG-PROFILE:SLICES for MIG nodes, e.g. 1xH100-MIG-3g.40gb:2."
            ),
        ),
    ] = "",
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait until every node is Ready.")
    ] = True,
    kubeconfig: MergeKubeconfigOpt = None,
    switch: Annotated[
        bool, typer.Option("--switch/--no-switch", help="Make gryvia-NAME the current context.")
    ] = True,
    api_port: Annotated[
        int | None, typer.Option("--api-port", help="kube-apiserver port [default: random].")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print kwokctl's commands; start nothing.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Build missing binaries without asking.")
    ] = False,
    kueue: Annotated[
        bool,
        typer.Option(
            "--kueue",
            help="Also run Kueue (CRDs, controller manager, webhooks; build it first with "
            "tools/k8s/build-kueue.sh).",
        ),
    ] = False,
    with_oidc: Annotated[
        bool,
        typer.Option(
            "--oidc",
            help="Also start Dex, an OIDC issuer the API server trusts, with demo users "
            "(see docs/oidc.md); log in with 'gryvia login'.",
        ),
    ] = False,
    bare: Annotated[
        bool,
        typer.Option(
            "--bare",
            help="Only the cluster: no Gryvia CRDs, chart objects or operator (install them "
            "yourself, e.g. with helm).",
        ),
    ] = False,
    with_prometheus: Annotated[
        bool | None,
        typer.Option(
            "--prometheus/--no-prometheus",
            help="Run a Prometheus server scraping the GPU exporters and read GPU use from it "
            "[default: when Debian's prometheus package is installed].",
            show_default=False,
        ),
    ] = None,
    kueue_block_admission: Annotated[
        bool,
        typer.Option(
            "--kueue-block-admission",
            help="With --kueue: Kueue admits the next job only once the pods of the last one "
            "are ready (waitForPodsReady.blockAdmission; see docs/kueue.md).",
        ),
    ] = False,
    with_registry: Annotated[
        bool,
        typer.Option(
            "--registry",
            help="Also run an OCI registry on loopback (Debian's docker-registry) holding the "
            "chart and, when 'make image' built it, the operator image, for 'helm install "
            "oci://...'.",
        ),
    ] = False,
    with_storage: Annotated[
        bool,
        typer.Option(
            "--storage",
            help="Also run a dynamic volume provisioner (local-path, built with 'make "
            "storage-bin'): claims of StorageClass local-path bind to folders of the sandbox.",
        ),
    ] = False,
    with_real_node: Annotated[
        bool,
        typer.Option(
            "--real-node",
            help="Also run one real node (as root; 'make node-bin' builds it): a kubelet with "
            "containerd, tainted for Gryvia's own pods, pulling from the sandbox's registry "
            "(started too). The chart's operator runs there; GPU jobs stay simulated.",
        ),
    ] = False,
    with_s3: Annotated[
        bool,
        typer.Option(
            "--s3",
            help="Also run an S3-compatible server on loopback (SeaweedFS, built with 'make "
            "s3-bin'); its endpoint and keys are written to a file the output names.",
        ),
    ] = False,
) -> None:
    """Start a sandbox cluster with Gryvia on it and add its context to your kubeconfig.

    Installs the chart's CRDs and cluster objects and runs the operator with every feature
    the sandbox can serve (as the demo does; `--bare` leaves them out), and with Debian's
    prometheus installed a Prometheus scraping the GPU exporters.
    """
    from gryvia_cli.sandbox import cluster, nodespec, oidc, platform, prometheus, registry
    from gryvia_cli.sandbox import kubeconfig as kc

    ensure_binaries(yes)
    if with_oidc and not dry_run:
        ensure_dex(yes)
    spec = nodes or nodespec.DEFAULT_NODES
    if dry_run:
        nodespec.parse_node_spec(spec)
        cluster.check_name(name)
        sys.stdout.write(cluster.dry_run_commands(name))
        return
    if with_prometheus is None:
        with_prometheus = not prometheus.missing()
        if not with_prometheus:
            info(f"• no Prometheus: {prometheus.missing()}; GPU use is read through the API server")
    started = time.monotonic()
    box = cluster.up(
        name,
        spec,
        api_port=api_port,
        wait=wait,
        progress=lambda m: info(f"• {m}"),
        with_kueue=kueue,
        with_oidc=with_oidc,
        with_prometheus=with_prometheus,
        with_registry=with_registry,
        with_storage=with_storage,
        with_s3=with_s3,
        kueue_block_admission=kueue_block_admission,
        with_real_node=with_real_node,
    )
    target = kubeconfig or kc.default_target()
    for note in kc.merge(box.kubeconfig, target, switch=switch):
        info(f"  {note}")
    if not bare:
        try:
            platform.install(box, lambda m: info(f"• {m}"), kueue=kueue)
        except GryviaError as exc:
            exc.hint = (exc.hint + "; " if exc.hint else "") + (
                f"the cluster runs without Gryvia: 'gryvia sandbox down --name {name}' removes it"
            )
            raise
    if url := prometheus.url(box):
        from gryvia_cli.settings import save_prometheus

        path = save_prometheus(box.context, url)
        info(f"  GPU use of context {box.context} comes from Prometheus {url} (saved in {path})")
    if with_registry or with_real_node:
        chart = registry.publish(box, lambda m: info(f"• {m}"))
        where = "" if bare else " (in a --bare sandbox: this one has release gryvia already)"
        info(f"  install it as the FAQ does{where}: helm install gryvia {chart} --plain-http \\")
        info("    --namespace gryvia-system --create-namespace --set auth.apiKey=...")
    info(f"sandbox {name!r} is up in {time.monotonic() - started:.1f}s: context {box.context}")
    info(f"  try: kubectl --context {box.context} get nodes -L nvidia.com/gpu.product")
    issuer = oidc.load(name)
    if issuer is not None:
        users = ", ".join(f"{u.email} ({u.password})" for u in oidc.USERS)
        info(f"  OIDC issuer {issuer.issuer}, client {issuer.client_id}; demo users: {users}")
        info(f"  log in: {issuer.login_command()} --context {box.context}")


@app.command()
def down(
    name: NameOpt = "sandbox",
    kubeconfig: MergeKubeconfigOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Stop a sandbox, kill every process it started, and remove its context."""
    from gryvia_cli.sandbox import cluster
    from gryvia_cli.sandbox import kubeconfig as kc

    box = cluster.Sandbox(name)
    if not box.workdir.exists():
        raise GryviaError(f"no sandbox named {name!r}", hint="see 'gryvia sandbox list'")
    if (
        not yes
        and sys.stdin.isatty()
        and not typer.confirm(f"Stop sandbox {name!r} and delete its jobs and data?", default=True)
    ):
        raise typer.Exit(1)
    cluster.down(name)
    for note in kc.remove(box.context, kubeconfig or kc.default_target()):
        info(f"  {note}")
    from gryvia_cli.settings import load_settings, save_prometheus

    if box.context in load_settings().prometheus_urls:
        save_prometheus(box.context, None)
    info(f"sandbox {name!r} stopped and removed")


def _rows(boxes: list[object]) -> list[dict[str, Any]]:
    from gryvia_cli.sandbox import cluster

    rows = []
    for box in boxes:
        assert isinstance(box, cluster.Sandbox)
        alive = box.alive()
        state = (
            "Running"
            if alive and all(alive.values())
            else "Degraded"
            if any(alive.values())
            else "Stopped"
        )
        server = ""
        if box.kubeconfig.exists():
            import yaml

            server = yaml.safe_load(box.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        rows.append(
            {
                "name": box.name,
                "context": box.context,
                "state": state,
                "server": server,
                "components": alive,
                "kubeconfig": str(box.kubeconfig),
            }
        )
    return rows


@app.command("list")
def list_(
    output: Annotated[OutputFormat, typer.Option("-o", "--output")] = default_format(),
) -> None:
    """List sandboxes on this machine.

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: SandboxList, items: [{name, context, state,
    server, components: {component: running}, kubeconfig}]}.
    """
    from gryvia_cli.sandbox import cluster

    rows = _rows(list(cluster.list_sandboxes()))
    if output in (OutputFormat.json, OutputFormat.yaml):
        render_data({"apiVersion": CLI_API_VERSION, "kind": "SandboxList", "items": rows}, output)
    elif output is OutputFormat.name:
        for row in rows:
            typer.echo(row["name"])
    else:
        render_table(
            ["name", "state", "context", "server"],
            [[r["name"], r["state"], r["context"], r["server"]] for r in rows],
        )


@app.command()
def status(
    name: NameOpt = "sandbox",
    output: Annotated[OutputFormat, typer.Option("-o", "--output")] = default_format(),
) -> None:
    """Show a sandbox's components and whether each is running; exit 1 if any is down.

    JSON/YAML: {apiVersion: cli.gryvia.io/v1, kind: SandboxStatus, name, context, state, server,
    components: {component: running}, kubeconfig}.
    """
    from gryvia_cli.sandbox import cluster

    box = cluster.Sandbox(name)
    if not box.workdir.exists():
        raise GryviaError(f"no sandbox named {name!r}", hint="start one: gryvia sandbox up")
    row = _rows([box])[0]
    if output in (OutputFormat.json, OutputFormat.yaml):
        render_data({"apiVersion": CLI_API_VERSION, "kind": "SandboxStatus"} | row, output)
    else:
        comps = row["components"]
        assert isinstance(comps, dict)
        render_table(
            ["component", "state"], [[c, "Running" if ok else "Stopped"] for c, ok in comps.items()]
        )
        info(f"sandbox {name!r}: {row['state']}, server {row['server']}, context {box.context}")
    if row["state"] != "Running":
        raise typer.Exit(1)


@app.command("kubeconfig")
def kubeconfig_(
    name: NameOpt = "sandbox",
    path: Annotated[bool, typer.Option("--path", help="Print the file's path only.")] = False,
) -> None:
    """Print the sandbox's kubeconfig (a single context gryvia-NAME)."""
    from gryvia_cli.sandbox import cluster

    box = cluster.Sandbox(name)
    if not box.kubeconfig.exists():
        raise GryviaError(f"no running sandbox named {name!r}", hint="gryvia sandbox up")
    typer.echo(str(box.kubeconfig) if path else box.kubeconfig.read_text(), nl=path)


@app.command("add-nodes")
def add_nodes(
    spec: Annotated[str, typer.Argument(help="Nodes to add, e.g. 1xH100:8.")],
    name: NameOpt = "sandbox",
) -> None:
    """Add simulated nodes to a running sandbox."""
    from gryvia_cli.sandbox import cluster

    for node in cluster.add_nodes(name, spec):
        typer.echo(f"node/{node} added")


@app.command("gpu-fault")
def gpu_fault(
    node: Annotated[str, typer.Argument(help="A GPU node of the sandbox, e.g. gpu-h100-0.")],
    gpu: Annotated[int, typer.Option("--gpu", help="The GPU's index on the node.")] = 0,
    xid: Annotated[
        int, typer.Option("--xid", min=0, help="The XID error to report (e.g. 79); 0 clears.")
    ] = 79,
    name: NameOpt = "sandbox",
) -> None:
    """Make one simulated GPU report an XID error, as a failing GPU does.

    The node's exporter serves it as DCGM_FI_DEV_XID_ERRORS from its next scrape;
    `gryvia health gpu` then names the node, the GPU and the job on it. `--xid 0` clears it.

    Examples:
      gryvia sandbox gpu-fault gpu-h100-0 --gpu 3 --xid 79
      gryvia sandbox gpu-fault gpu-h100-0 --gpu 3 --xid 0
    """
    from gryvia_cli.errors import UsageError
    from gryvia_cli.sandbox.gpusim import set_fault
    from gryvia_cli.sandbox.sandboxes import Sandbox

    try:
        set_fault(Sandbox(name).state, node, gpu, xid)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    typer.echo(f"{node} GPU {gpu}: " + (f"reports XID {xid}" if xid else "fault cleared"))
