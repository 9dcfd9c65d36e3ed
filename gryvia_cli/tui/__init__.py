"""The Textual console (`gryvia tui`): `run()` starts it; `make_app()` builds it for tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_cli.tui.app import GryviaApp


def make_app(*args: Any, **kwargs: Any) -> GryviaApp:
    """Build the console app (see `gryvia_cli.tui.app.make_app`)."""
    from gryvia_cli.tui.app import make_app as build

    return build(*args, **kwargs)


def run(
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    readonly: bool,
) -> None:
    """Start the console against the kubeconfig context (None: current) in `namespace`
    (None: the saved default, the context's, else `default`) or every namespace.

    Raises GryviaError (KubeconfigError, ...) before the screen opens when the kubeconfig
    cannot be loaded; later API problems are shown inside the console.

    The Jobs view's list is requested before Textual and the views are imported
    (`KubeSource.prefetch`), so the round trips overlap the start-up.

    When the console closes, the process ends at once (`os._exit` with the app's return
    code, after flushing stdout and stderr): worker threads may still wait on a stalled
    network, and neither they nor the interpreter's teardown of a large heap may delay `q`;
    should closing itself hang, the process ends `EXIT_DEADLINE_SECONDS` after `q` anyway
    (`driver.exit_by_deadline`, which prints every thread's stack to stderr).
    A closed terminal (the window, tmux pane or ssh session: SIGHUP, or a hung-up tty) ends it
    the same way with code 129 (128 + SIGHUP): there is no terminal left to restore or draw on.
    """
    import os
    import signal
    import sys
    from pathlib import Path

    from gryvia_cli.settings import load_settings
    from gryvia_cli.tui.kubesource import KubeSource  # light: no Textual, store or pydantic

    settings = load_settings()
    source = KubeSource.open(
        Path(kubeconfig) if kubeconfig else None,
        context,
        namespace,
        all_namespaces=all_namespaces,
        saved_namespaces=dict(settings.namespaces),
        timeout=settings.request_timeout,
    )
    # The first view's list goes out now and arrives while Textual and the views load. The
    # thread reading it gives up the GIL at every socket read and waits for it again; the
    # main thread, busy loading and drawing, hands it over after the switch interval (5 ms by
    # default): a 1 ms interval lets watch threads read promptly beside a busy UI.
    sys.setswitchinterval(0.001)
    source.prefetch("jobs", source.target.namespace)
    from gryvia_cli.gcpause import paused, settle

    with paused():  # start-up only allocates: no collections while the console loads
        from gryvia_cli.tui.driver import HANGUP_EXIT_CODE, exit_on_hangup
        from gryvia_cli.tui.userconfig import console_config_path

        app = make_app(source, readonly=readonly, config_file=console_config_path())
    settle()
    signal.signal(signal.SIGHUP, lambda signum, frame: os._exit(HANGUP_EXIT_CODE))
    exit_on_hangup(sys.__stdin__.fileno() if sys.__stdin__ else 0)
    app.exit_deadline = True
    app.run()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(app.return_code or 0)
