"""The connection the CLI and the Python API share: kubeconfig, context and namespace, and
the settings, access layer and clock built from them on first use.

`gryvia_cli.cli.session.Session` (the CLI's global options) extends it; `gryvia.Client` holds
one. Views take either (they use `access()`, `resolve_namespace()`, `now()`, `settings()`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gryvia_cli.kube.access import KubeAccess
    from gryvia_cli.settings import GryviaSettings


@dataclass
class Connection:
    """Where to talk to (kubeconfig, context, default namespace) and what is built from it,
    lazily: the settings, the access layer, the clock. No Typer, Rich or Textual: the Python
    API (`gryvia.Client`) holds one, and the CLI's `cli.session.Session` extends it with the
    output options."""

    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str | None = None
    verbose: bool = False
    access_factory: Callable[[Connection], Any] | None = None
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    _settings: Any = None
    _access: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def settings(self) -> GryviaSettings:
        """The settings (environment and config file), read on first use."""
        with self._lock:  # `gryvia mcp` answers tool calls from several threads
            if self._settings is None:
                from gryvia_cli.settings import load_settings

                self._settings = load_settings()
        return self._settings  # type: ignore[no-any-return]

    def access(self) -> KubeAccess:
        """The access layer for the effective context, connected on first use."""
        if self._access is None:
            timeout = self.settings().request_timeout
            with self._lock:  # one connection, whichever thread asks first
                if self._access is not None:
                    pass
                elif self.access_factory is not None:
                    self._access = self.access_factory(self)
                else:
                    from gryvia_cli.kube.connect import connect

                    self._access = connect(
                        self.kubeconfig, self.context, timeout=timeout, verbose=self.verbose
                    )
        return self._access  # type: ignore[no-any-return]

    def resolve_namespace(self, flag: str | None = None) -> str:
        """`-n` (command, then global), the saved default of the context, the context's
        namespace, else `default`."""
        from gryvia_cli.kube.config import effective_namespace

        ns, _ = effective_namespace(
            flag or self.namespace, self.settings().namespaces, self.access().context
        )
        return ns

    def prometheus_url(self) -> str:
        """The Prometheus URL set for the effective context ("" when none: GPU use is read
        through the API server), see `GryviaSettings.prometheus_for`."""
        context = getattr(self.access(), "context", None)
        return self.settings().prometheus_for(getattr(context, "name", None))

    def manifest_namespace(self, doc: object, flag: str | None = None) -> str:
        """Where a manifest's object goes: its own `metadata.namespace` when it has one, else
        `resolve_namespace(flag)`. Raises UsageError when the manifest's namespace and an
        explicit `-n` (command or global) disagree, as `gryvia submit -f` does."""
        from gryvia_cli.errors import UsageError

        meta = doc.get("metadata") if isinstance(doc, dict) else None
        own = meta.get("namespace") if isinstance(meta, dict) else None
        explicit = flag or self.namespace
        if isinstance(own, str) and own:
            if explicit and explicit != own:
                name = meta.get("name") if isinstance(meta, dict) else None
                raise UsageError(
                    f"{name or 'the manifest'} is for namespace {own}, not {explicit}",
                    hint="drop -n, or change metadata.namespace in the manifest",
                )
            return own
        return self.resolve_namespace(flag)

    def now(self) -> datetime:
        """The current time (injectable for tests)."""
        return self.clock()
