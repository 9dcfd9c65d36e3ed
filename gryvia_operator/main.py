"""`gryvia-operator`: parse settings, set up logging, run the operator until a signal."""

from __future__ import annotations

import asyncio
import json
import logging
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
    """Entry point of `gryvia-operator` and `python -m gryvia_operator`."""
    settings = parse_settings(argv)
    configure_logging(settings)
    from gryvia_operator.controller.operator import RefusedToStartError, run
    from gryvia_operator.handlers.registry import WIRING

    try:
        asyncio.run(run(settings, WIRING))
    except KeyboardInterrupt:
        return 130
    except RefusedToStartError as exc:
        for line in exc.lines:
            logging.getLogger("gryvia_operator").error("%s", line)
        return exc.exit_code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
