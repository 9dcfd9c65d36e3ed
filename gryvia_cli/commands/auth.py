"""`gryvia login`, `gryvia logout` and `gryvia auth token|whoami`: OIDC login for kubectl, k9s
and gryvia alike.

`login` runs the device flow (or authorization code with PKCE on a loopback redirect), keeps the
refresh token in the system keyring and writes a kubeconfig user whose exec plugin is `gryvia
auth token`; that command prints an ExecCredential, refreshing the ID token when it is about to
expire. See docs/oidc.md.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated

import typer

from gryvia_cli.cli.options import OutputOpt
from gryvia_cli.cli.session import session
from gryvia_cli.output import MACHINE_FORMATS, emit, info, render_data, success

app = typer.Typer(help="Log in with OIDC; the kubeconfig's exec credential plugin.")


class Flow(StrEnum):
    """How `gryvia login` authenticates."""

    auto = "auto"
    device = "device"
    pkce = "pkce"


IssuerOpt = Annotated[
    str,
    typer.Option(
        "--issuer",
        help="OIDC issuer URL, exactly as in its discovery document.",
        show_default=False,
    ),
]
ClientOpt = Annotated[str, typer.Option("--client-id", help="Client id registered at the issuer.")]
CaOpt = Annotated[
    str | None,
    typer.Option("--ca-file", help="PEM CA file that verifies the issuer [default: system CAs]."),
]


@app.command()
def login(
    ctx: typer.Context,
    issuer: IssuerOpt,
    client_id: ClientOpt = "gryvia",
    ca_file: CaOpt = None,
    flow: Annotated[
        Flow,
        typer.Option(
            "--flow", help="auto: device flow when the issuer offers it, else PKCE in a browser."
        ),
    ] = Flow.auto,
    user: Annotated[
        str | None,
        typer.Option("--user", help="Kubeconfig user to write [default: CLUSTER-oidc]."),
    ] = None,
    switch: Annotated[
        bool,
        typer.Option("--switch/--no-switch", help="Make the login's context the current one."),
    ] = True,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="Open the login page in a browser.")
    ] = True,
    callback_port: Annotated[
        int | None,
        typer.Option(
            "--callback-port",
            help="PKCE: loopback port of the redirect [default: 8000, else 18000]; 0: any.",
        ),
    ] = None,
) -> None:
    """Log in with OIDC and add a kubeconfig user that uses the login.

    The user and a context of the same name go into the kubeconfig kubectl writes to
    (--kubeconfig, the first KUBECONFIG file or ~/.kube/config), for the cluster of the current
    (or --context) context. The refresh token goes into the system keyring, never a file.

    Examples:
      gryvia login --issuer https://dex.example.com --client-id gryvia
      gryvia --context gryvia-sandbox login --issuer https://127.0.0.1:5556/dex --ca-file ca.crt
    """
    from gryvia_cli.auth import client, store
    from gryvia_cli.auth.kubeconfig import write_login
    from gryvia_cli.core.oidc import jwt_claims
    from gryvia_cli.kube.config import describe_context
    from gryvia_cli.sandbox.kubeconfig import default_target

    state = session(ctx)
    target_ctx = describe_context(state.kubeconfig, state.context)
    store.backend_name()  # refuse before the user types a password
    idp = client.Issuer(issuer, client_id, ca_file)
    discovery = idp.discover()
    use_device = flow is Flow.device or (
        flow is Flow.auto and bool(discovery.get("device_authorization_endpoint"))
    )
    if use_device:
        prompt = client.start_device(idp, discovery)
        _url_line("To log in, open", prompt.verification_uri_complete)
        info(f"and confirm the code {prompt.user_code} (valid {prompt.expires_in:.0f}s).")
        if browser:
            _open(prompt.verification_uri_complete)
        reply = client.poll_device(idp, discovery, prompt)
    else:

        def show(url: str) -> None:
            _url_line("To log in, open", url)
            if browser:
                _open(url)

        ports = (8000, 18000) if callback_port is None else (callback_port,)
        reply = client.pkce_login(idp, discovery, show, ports=ports)
    login_record = client.stored_login(idp, reply)
    store.save(login_record)
    claims = jwt_claims(login_record.id_token)
    name = user or f"{target_ctx.cluster}-oidc"
    target = state.kubeconfig or default_target()
    notes = write_login(
        target,
        user=name,
        context=name,
        cluster=target_ctx.cluster,
        namespace=target_ctx.namespace,
        issuer=issuer,
        client_id=client_id,
        ca_file=ca_file,
        switch=switch,
    )
    for note in notes:
        info(f"  {note}")
    groups = ", ".join(claims.get("groups") or []) or "-"
    success(
        f"logged in as {claims.get('email') or claims.get('sub')} (groups: {groups}); "
        f"refresh token kept in the keyring ({store.backend_name()})"
    )
    info(f"  try: kubectl --user {name} auth whoami; gryvia auth whoami")


def _url_line(label: str, url: str) -> None:
    """`label` and `url` on stderr, the URL on a line of its own and never folded."""
    from gryvia_cli.core.plaintext import visible

    info(label)
    sys.stderr.write(f"  {visible(url)}\n")
    sys.stderr.flush()


def _open(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except Exception:  # no browser: the printed URL is enough
        return


@app.command()
def logout(
    ctx: typer.Context,
    user: Annotated[
        str | None,
        typer.Option("--user", help="Kubeconfig user to remove [default: the context's user]."),
    ] = None,
) -> None:
    """Forget an OIDC login: keyring entry and kubeconfig user.

    Removes the keyring entry, the kubeconfig user and every context that uses it.

    Examples:
      gryvia logout
      gryvia logout --user gryvia-sandbox-oidc
    """
    from gryvia_cli.auth import store
    from gryvia_cli.auth.kubeconfig import login_of, remove_login
    from gryvia_cli.errors import GryviaError
    from gryvia_cli.kube.config import describe_context
    from gryvia_cli.sandbox.kubeconfig import default_target

    state = session(ctx)
    target = state.kubeconfig or default_target()
    name = user or describe_context(state.kubeconfig, state.context).user
    found = login_of(target, name)
    if found is None:
        raise GryviaError(
            f"kubeconfig user {name!r} in {target} is not a 'gryvia login' user",
            hint="pass --user NAME (a user whose exec plugin is 'gryvia auth token')",
        )
    issuer, client_id, _ca = found
    removed = store.delete(issuer, client_id)
    for note in remove_login(target, name):
        info(f"  {note}")
    success(
        f"logged out of {issuer}"
        + ("" if removed else " (no keyring entry was left: already logged out)")
    )


@app.command()
def token(
    issuer: IssuerOpt,
    client_id: ClientOpt = "gryvia",
    ca_file: CaOpt = None,
) -> None:
    """Print an ExecCredential (client.authentication.k8s.io/v1) with the ID token of the
    login, refreshed first when it expires within a minute. Called by kubectl's exec plugin.

    Examples:
      gryvia auth token --issuer https://dex.example.com --client-id gryvia
    """
    from datetime import UTC, datetime

    from gryvia_cli.auth import store
    from gryvia_cli.core.oidc import exec_credential

    login_record = store.load(issuer, client_id)
    if not login_record.fresh(datetime.now(UTC)):
        from gryvia_cli.auth import client  # httpx only when the token must be refreshed

        idp = client.Issuer(issuer, client_id, ca_file)
        reply = client.refresh(idp, idp.discover(), login_record.refresh_token)
        login_record = client.stored_login(idp, reply, login_record.refresh_token)
        store.save(login_record)
    sys.stdout.write(json.dumps(exec_credential(login_record.id_token, login_record.expiry)) + "\n")


@app.command()
def whoami(ctx: typer.Context, output: OutputOpt = None) -> None:
    """Print the user and groups the API server sees for the current context
    (a SelfSubjectReview).

    Examples:
      gryvia auth whoami
      gryvia --context gryvia-sandbox-oidc auth whoami -o json
    """
    from gryvia_cli.kube.whoami import self_subject_review

    state = session(ctx)
    data = self_subject_review(state.access())
    fmt = state.fmt(output)
    if fmt in MACHINE_FORMATS:
        render_data(data, fmt)
        return
    emit(f"Username: {data['username']}")
    emit(f"Groups:   {', '.join(data['groups']) or '-'}")
    if data["uid"]:
        emit(f"UID:      {data['uid']}")
