"""The pod runner's watch loop: list, then watch from that resourceVersion, forever.

The watch is the runner's main loop: it survives expired versions (410: list again), watch
errors and an API server that goes away (retry after a second) until `stop` is set.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

log = logging.getLogger("gryvia.sandbox.runner")

#: Receives each object as a dict with its event type: ADDED (also for the initial list),
#: MODIFIED or DELETED.
Handler = Callable[[str, dict[str, Any]], None]


def watch_forever(
    lister: Callable[..., Any], handler: Handler, stop: threading.Event, **kwargs: Any
) -> None:
    """Call `handler` for every object `lister` lists (as ADDED) and every later event, until
    `stop` is set. `lister` is a `list_*` method of the kubernetes client; `kwargs` go to it
    (e.g. `field_selector`). Never raises: errors are logged and the watch restarted."""
    version = ""
    while not stop.is_set():
        try:
            if not version:
                listing = lister(_preload_content=False, **kwargs)
                body = json.loads(listing.data)
                for item in body["items"]:
                    handler("ADDED", item)
                version = body["metadata"]["resourceVersion"]
            for event in watch.Watch().stream(
                lister, resource_version=version, timeout_seconds=60, **kwargs
            ):
                obj = event["raw_object"]
                if event["type"] == "ERROR":
                    version = ""
                    break
                version = obj["metadata"]["resourceVersion"]
                handler(event["type"], obj)
        except ApiException as exc:
            if exc.status == 410:
                version = ""
            else:
                log.warning("watch failed: %s", exc.reason)
                time.sleep(1)
        except Exception as exc:  # the API server went away: retry, the watch is the loop
            log.warning("watch error: %s", exc)
            time.sleep(1)
