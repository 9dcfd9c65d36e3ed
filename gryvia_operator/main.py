"""`gryvia-operator`: parse settings, set up logging, run the operator until a signal."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from gryvia_operator.settings import OperatorSettings, parse_settings


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the object kopf names."""

    def format(self, record: logging.LogRecord) -> str:
        """Render `record` as a JSON line."""
        out = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ref = getattr(record, "k8s_ref", None)
        if isinstance(ref, dict):
            out["object"] = "/".join(str(ref[k]) for k in ("namespace", "name") if ref.get(k))
            out["kind"] = ref.get("kind", "")
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out)


def configure_logging(settings: OperatorSettings) -> None:
    """Log to stderr in the configured format and level (kopf's own logs included)."""
    handler = logging.StreamHandler(sys.stderr)
    if settings.effective_log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    if settings.log_level != "debug":  # kopf is chatty at info about every handler
        logging.getLogger("kopf").setLevel(logging.WARNING)
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
        logging.getLogger("stripe").setLevel(logging.WARNING)  # one line per request (--stripe)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `gryvia-operator` and `python -m gryvia_operator`: runs the operator,
    then ends the process at once with its exit status (0, 130 on SIGINT, the refusal's
    status) rather than returning it.

    Once `run` has returned, the Lease is released, the servers are stopped and the logs are
    flushed, but a thread of the API client's pool may still wait on a long GET (a watch
    probe, a log read) for its full timeout, and the interpreter's exit joins those threads:
    measured 10-18 s from SIGTERM to exit, which a rolling upgrade and every restart paid."""
    settings = parse_settings(argv)
    configure_logging(settings)
    from gryvia_operator.controller.operator import RefusedToStartError, run
    from gryvia_operator.handlers.registry import WIRING

    code = 0
    try:
        asyncio.run(run(settings, WIRING))
    except KeyboardInterrupt:
        code = 130
    except RefusedToStartError as exc:
        for line in exc.lines:
            logging.getLogger("gryvia_operator").error("%s", line)
        code = exc.exit_code
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
