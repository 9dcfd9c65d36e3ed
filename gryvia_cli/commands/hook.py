"""`gryvia hook create|list|get|delete|test`: GryviaJobHooks, signed POSTs of job transitions."""

from __future__ import annotations

import base64
from typing import Annotated

import typer

from gryvia_cli.cli.kindcommands import add_get
from gryvia_cli.cli.objects import ObjectGroup, rows_for
from gryvia_cli.cli.options import AllNamespacesOpt, NamespaceOpt, OutputOpt, YesOpt, check_new_name
from gryvia_cli.cli.session import session
from gryvia_cli.core.hooks import hook_details
from gryvia_cli.errors import GryviaError, NotFoundError, UsageError
from gryvia_cli.kube import resources as r
from gryvia_cli.output import (
    MACHINE_FORMATS,
    OutputFormat,
    emit,
    render_data,
    render_table,
    success,
)

app = typer.Typer(
    help="Job hooks: signed POSTs when jobs reach chosen phases.", no_args_is_help=True
)
NameArg = Annotated[str, typer.Argument(help="Hook name.", show_default=False)]

HOOKS = ObjectGroup(r.JOBHOOK, "hook", "hook")


@app.command("create")
def create(
    ctx: typer.Context,
    name: NameArg,
    url: Annotated[
        str,
        typer.Option(
            "--url", metavar="URL", help="Receiver (http:// or https://).", show_default=False
        ),
    ],
    event: Annotated[
        list[str],
        typer.Option(
            "--event",
            metavar="EVENT",
            help=(
                "Running, Succeeded, Failed, Cancelled, Preempted, Rejected, IdleWarning, "
                "IdleJobSuspended, IdleJobCancelled, Stalled; repeatable."
            ),
            show_default=False,
        ),
    ],
    fmt: Annotated[
        str, typer.Option("--format", metavar="FMT", help="gryvia (JSON event) or slack.")
    ] = "gryvia",
    secret: Annotated[
        str | None,
        typer.Option("--secret", metavar="NAME", help="Secret (key `secret`) that signs POSTs."),
    ] = None,
    selector: Annotated[
        list[str] | None,
        typer.Option("--selector", "-l", metavar="KEY=VALUE", help="Only jobs with this label."),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", metavar="KEY=VALUE", help="Extra request header; repeatable."),
    ] = None,
    attempts: Annotated[
        int | None,
        typer.Option("--attempts", min=1, max=10, help="Attempts per delivery [default: 3]."),
    ] = None,
    backoff: Annotated[
        int | None,
        typer.Option(
            "--backoff", min=1, max=3600, metavar="SECONDS", help="First retry wait [default: 10]."
        ),
    ] = None,
    timeout: Annotated[
        int | None,
        typer.Option(
            "--timeout", min=1, max=30, metavar="SECONDS", help="Per request [default: 10]."
        ),
    ] = None,
    suspend: Annotated[bool, typer.Option("--suspend", help="Create it paused.")] = False,
    namespace: NamespaceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Create or update a job hook (server-side apply).

    The operator (run with --enable-job-hooks) POSTs each chosen transition of the
    namespace's jobs once, signed with the Secret's key `secret`, retried with doubling
    back-off; transitions before the hook existed are never sent. Private, loopback and
    metadata addresses are refused unless the chart allows them (aiOperator.jobHooks.allowedCIDRs).

    Examples:
      gryvia hook create done --url https://hooks.example/gryvia --event Succeeded --event Failed
      gryvia hook create chat --url https://chat.example/h --format slack --event Failed -l team=a
      gryvia hook create signed --url https://h.example/x --event Running --secret hook-key
    """
    check_new_name(name, "hook name")
    from gryvia_cli.core.hooks import build_hook, parse_events, parse_pairs

    try:
        body = build_hook(
            name,
            url=url,
            events=parse_events(event),
            fmt=fmt,
            secret=secret,
            selector=parse_pairs(selector or [], "--selector"),
            header=parse_pairs(header or [], "--header"),
            attempts=attempts,
            backoff=backoff,
            timeout=timeout,
            suspend=suspend,
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="see 'gryvia hook create --help'") from None
    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    obj = state.access().apply(r.JOBHOOK, body, ns)
    success(f"hook {name} applied in namespace {ns}")
    HOOKS.print_written(state, obj, output)


@app.command("list")
def list_hooks(
    ctx: typer.Context,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    output: OutputOpt = None,
) -> None:
    """List job hooks: events, URL, Ready reason, deliveries and failures.

    READY is Valid, Suspended, InvalidSpec (bad or refused URL), SecretMissing, or Pending
    until the operator checked it. `-o wide` adds SELECTOR, FORMAT, LAST DELIVERY and LAST
    ERROR; `-o json|yaml` prints the GryviaJobHookList.

    Examples:
      gryvia hook list
      gryvia hook list -A -o wide
    """
    from gryvia_cli.core.hooks import HOOK_COLUMNS, HOOK_WIDE_COLUMNS, hook_row, hook_wide_row
    from gryvia_operator.api.jobhook import GryviaJobHook

    state = session(ctx)
    fmt = state.fmt(output)
    ns = None if all_namespaces else state.resolve_namespace(namespace)
    empty = "No job hooks found." if ns is None else f"No job hooks in namespace {ns}."
    hooks = HOOKS.listed(state, GryviaJobHook, fmt, ns, empty)
    if hooks is None:
        return
    hooks.sort(key=lambda h: (h.namespace, h.name))
    now = state.now()
    wide = fmt is OutputFormat.wide
    columns = HOOK_WIDE_COLUMNS if wide else HOOK_COLUMNS
    rows = rows_for(hooks, lambda h: (hook_wide_row if wide else hook_row)(h, now), ns is None)
    render_table(("NAMESPACE", *columns) if ns is None else columns, rows)


add_get(
    app,
    HOOKS,
    hook_details,
    "Show one hook: events, jobs, URL, headers, signing, retry, Ready, counters, last error.",
    "done",
)


@app.command("delete")
def delete(
    ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None, yes: YesOpt = False
) -> None:
    """Delete a hook (deliveries in flight end; nothing more is sent).

    Examples:
      gryvia hook delete done --yes
    """
    state = session(ctx)
    HOOKS.delete(state, name, state.resolve_namespace(namespace), yes)


@app.command("test")
def test(
    ctx: typer.Context, name: NameArg, namespace: NamespaceOpt = None, output: OutputOpt = None
) -> None:
    """Send a signed sample event (a `Succeeded` of job `hook-test`) from this machine to the
    hook's URL and print the receiver's answer; exit 1 unless it answers 2xx.

    The sample carries `"test": true` and delivery id `test-<unix seconds>`; it is signed
    with the hook's Secret (you need read access to it). Redirects are not followed.

    Examples:
      gryvia hook test done
      gryvia hook test done -o json
    """
    import time

    import httpx

    from gryvia_cli.core.hooks import sample_request
    from gryvia_operator.api.jobhook import GryviaJobHook
    from gryvia_operator.api.resources import SECRET

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    hook = GryviaJobHook.model_validate(HOOKS.read(state, name, ns))
    secret = None
    ref = hook.spec.webhook.secret_ref
    if ref is not None:
        try:
            found = state.access().get(SECRET, ref.name, ns)
        except NotFoundError:
            raise NotFoundError(
                f"Secret {ns}/{ref.name} of hook {name} not found",
                hint="create it with key 'secret', or remove spec.webhook.secretRef",
            ) from None
        data = (found.get("data") or {}).get("secret")
        if not data:
            raise UsageError(f"Secret {ns}/{ref.name} has no key 'secret'")
        secret = base64.b64decode(data)
    body, headers = sample_request(hook, secret, state.now())
    url = hook.spec.webhook.url
    started = time.monotonic()
    try:
        with httpx.Client(
            timeout=hook.spec.webhook.timeout_seconds, follow_redirects=False
        ) as client:
            answer = client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise GryviaError(f"POST {url} failed: {type(exc).__name__}: {exc}") from None
    millis = int((time.monotonic() - started) * 1000)
    result = {
        "url": url,
        "delivery": headers["X-Gryvia-Delivery"],
        "status": answer.status_code,
        "elapsedMs": millis,
        "body": answer.text[:2000],
    }
    fmt = state.fmt(output)
    if fmt in MACHINE_FORMATS:
        render_data(result, fmt)
    else:
        emit(
            f"POST {url}: HTTP {answer.status_code} in {millis} ms (delivery {result['delivery']})"
        )
        if answer.text:
            emit(answer.text[:2000])
    if not 200 <= answer.status_code < 300:
        raise typer.Exit(1)
