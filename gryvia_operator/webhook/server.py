"""The webhook's HTTPS server (aiohttp): AdmissionReviews in, `review` decisions out."""

from __future__ import annotations

import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aiohttp import web

from gryvia_operator.webhook import certs
from gryvia_operator.webhook.billing import (
    INVOICE_PATH,
    LEDGER_ENTRY_PATH,
    review_invoice,
    review_ledger_entry,
)
from gryvia_operator.webhook.names import NAMES_PATH, review_name
from gryvia_operator.webhook.review import (
    AIJOB_MUTATE_PATH,
    AIJOB_PATH,
    USAGE_RECORD_PATH,
    PolicyContext,
    ReviewError,
    review_aijob,
    review_aijob_mutation,
    review_usage_record,
)

log = logging.getLogger("gryvia.operator.webhook")
Inventory = Callable[[], Iterable[tuple[str, int]]]
Observe = Callable[[str, bool, float], None]
ClassLookup = Callable[[str], Awaitable[str | None]]
"""A StorageClass's provisioner read from the API server (None: no such class)."""


@dataclass(frozen=True)
class TlsFiles:
    """The serving certificate and key files, and the CA (PEM) that clients must trust."""

    cert: Path
    key: Path
    ca_pem: bytes


def self_signed(folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
    """Mint a CA and a serving certificate for `hosts` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    ca = certs.make_ca("gryvia-webhook-ca")
    leaf = certs.make_leaf(ca, "gryvia-webhook", hosts=hosts)
    leaf.write(folder / "tls.crt", folder / "tls.key")
    (folder / "ca.crt").write_bytes(ca.cert_pem)
    return TlsFiles(folder / "tls.crt", folder / "tls.key", ca.cert_pem)


def from_cert_dir(folder: Path) -> TlsFiles:
    """Files mounted from a kubernetes.io/tls Secret: tls.crt, tls.key and (optional) ca.crt."""
    ca = folder / "ca.crt"
    return TlsFiles(folder / "tls.crt", folder / "tls.key", ca.read_bytes() if ca.exists() else b"")


class WebhookServer:
    """Serves every Gryvia admission webhook (validating and mutating) on one HTTPS port."""

    def __init__(
        self,
        host: str,
        port: int,
        tls: TlsFiles,
        inventory: Inventory,
        observe: Observe = lambda path, allowed, seconds: None,
        policy: Callable[[str], PolicyContext] | None = None,
        storage_class: ClassLookup | None = None,
    ) -> None:
        self.host, self.port, self.tls = host, port, tls
        self._inventory, self._observe, self._policy = inventory, observe, policy
        self._storage_class = storage_class
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        """The aiohttp application (also used by tests without TLS)."""
        app = web.Application()
        app.router.add_post(AIJOB_PATH, self._aijob)
        app.router.add_post(AIJOB_MUTATE_PATH, self._aijob_mutation)
        app.router.add_post(USAGE_RECORD_PATH, self._usage_record)
        app.router.add_post(LEDGER_ENTRY_PATH, self._ledger_entry)
        app.router.add_post(INVOICE_PATH, self._invoice)
        app.router.add_post(NAMES_PATH, self._names)
        app.router.add_get("/healthz", self._healthz)
        return app

    async def start(self) -> int:
        """Start listening; return the bound port (useful with port 0)."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.tls.cert), str(self.tls.key))
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=context)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("webhook serving on https://%s:%d", self.host, self.port)
        return self.port

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _answer(
        self, request: web.Request, decide: Callable[[Any], dict[str, Any]]
    ) -> web.Response:
        started = time.perf_counter()
        try:
            review = json.loads(await request.read())
            answer = decide(review)
        except (ValueError, ReviewError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        allowed = bool(answer["response"]["allowed"])
        self._observe(request.path, allowed, time.perf_counter() - started)
        return web.json_response(answer)

    async def _aijob(self, request: web.Request) -> web.Response:
        policy = await self._with_storage_class(request)
        return await self._answer(
            request, lambda r: review_aijob(r, list(self._inventory()), policy)
        )

    async def _with_storage_class(
        self, request: web.Request
    ) -> Callable[[str], PolicyContext] | None:
        """The policy, with the StorageClass a job's spec.storage names read from the API
        server when neither the backends nor the class index know it (a class created just
        before the job, not yet seen by the watch): one GET, only for such a job."""
        policy, lookup = self._policy, self._storage_class
        if policy is None or lookup is None:
            return policy
        try:
            req = json.loads(await request.read())["request"]
            name, namespace = req["object"]["spec"]["storage"], req.get("namespace")
        except (ValueError, KeyError, TypeError):
            return policy
        if not isinstance(name, str) or not name:
            return policy
        context = policy(str(namespace or ""))
        classes = context.storage_classes
        if classes is None or name in classes or any(s.name == name for s in context.storages):
            return lambda _namespace: context
        provisioner = await lookup(name)
        if provisioner is not None:
            context = replace(context, storage_classes={**classes, name: provisioner})
        return lambda _namespace: context

    async def _aijob_mutation(self, request: web.Request) -> web.Response:
        return await self._answer(request, review_aijob_mutation)

    async def _usage_record(self, request: web.Request) -> web.Response:
        return await self._answer(request, review_usage_record)

    async def _ledger_entry(self, request: web.Request) -> web.Response:
        return await self._answer(request, review_ledger_entry)

    async def _invoice(self, request: web.Request) -> web.Response:
        return await self._answer(request, review_invoice)

    async def _names(self, request: web.Request) -> web.Response:
        return await self._answer(request, review_name)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")
