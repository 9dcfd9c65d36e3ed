"""The sandbox's pod runner: a tiny kubelet that runs scheduled pods as local processes.

kwok-controller keeps the simulated nodes Ready; this process does what a kubelet does for the
pods the real kube-scheduler bound to them: gives each pod an address (its own 127.x.y.z
loopback address), runs init containers then containers (`command`+`args`, env resolved as the
kubelet does, `workingDir` under a per-pod folder), writes their output as CRI log files that
kwok serves to `kubectl logs`, reports phase and container states, restarts containers as the
`restartPolicy` says, and kills the processes when the pod is deleted. Images are not pulled.

Run as `python -m gryvia_cli.sandbox.runner --kubeconfig FILE --state DIR`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import datetime as dt
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from gryvia_cli.sandbox import hosts, podenv
from gryvia_cli.sandbox.crilog import CriLogWriter

log = logging.getLogger("gryvia.sandbox.runner")

HOST_IP = "127.0.0.1"
KWOK_GROUP, KWOK_VERSION = "kwok.x-k8s.io", "v1alpha1"
_SHIM = 'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"'


def now() -> str:
    """Return the current UTC time in the API's RFC 3339 form (seconds)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def can_use_namespaces() -> bool:
    """True when mount and UTS namespaces work here (root with `unshare`): pods then see the
    cluster hosts file as /etc/hosts and their own host name."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "--uts", "--propagation", "private", "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@dataclass
class Container:
    """One running (or finished) container process."""

    name: str
    proc: subprocess.Popen[bytes] | None = None
    started_at: str = ""
    restarts: int = 0
    exit_code: int | None = None
    finished_at: str = ""
    message: str = ""


@dataclass
class PodRun:
    """The runner's record of one pod it has started."""

    uid: str
    namespace: str
    name: str
    ip: str
    folder: Path
    containers: dict[str, Container] = field(default_factory=dict)
    stopping: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)  # a container ended


class PodRunner:
    """Watches pods bound to nodes and runs them. Thread-safe; one instance per sandbox."""

    def __init__(self, api: client.ApiClient, state: Path, *, namespaces: bool) -> None:
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.state = state
        self.namespaces = namespaces
        self.hosts_dir = state / "hosts"
        self.runs: dict[str, PodRun] = {}
        self.addresses: dict[str, hosts.PodAddress] = {}
        self.services: dict[str, hosts.ServiceInfo] = {}
        self.lock = threading.Lock()
        self.hosts_dirty = threading.Event()
        self.stop = threading.Event()
        self._ips = itertools.count(1)
        self.hosts_dir.mkdir(parents=True, exist_ok=True)

    # -- watches ---------------------------------------------------------------------------

    def run(self) -> None:
        """Watch services and pods until `stop` is set."""
        threading.Thread(target=self._watch_services, daemon=True).start()
        threading.Thread(target=self._write_hosts_loop, daemon=True).start()
        self._watch(
            self.core.list_pod_for_all_namespaces, self.on_pod, field_selector="spec.nodeName!="
        )

    def _watch(self, lister: Any, handler: Any, **kwargs: Any) -> None:
        version = ""
        while not self.stop.is_set():
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

    def _watch_services(self) -> None:
        self._watch(self.core.list_service_for_all_namespaces, self.on_service)

    def on_service(self, kind: str, svc: dict[str, Any]) -> None:
        """Track Services for the hosts file."""
        meta = svc["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        with self.lock:
            if kind == "DELETED":
                self.services.pop(key, None)
            else:
                self.services[key] = hosts.ServiceInfo(
                    meta["namespace"], meta["name"], (svc.get("spec") or {}).get("selector") or {}
                )
        self.hosts_dirty.set()

    def on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        """React to one pod event: start it, stop it, or finish its deletion."""
        meta, status = pod["metadata"], pod.get("status") or {}
        uid = meta["uid"]
        if kind == "DELETED":
            self._forget(uid, kill=True)
            return
        if meta.get("deletionTimestamp"):
            if uid not in self.runs or not self.runs[uid].stopping.is_set():
                threading.Thread(target=self._delete, args=(pod,), daemon=True).start()
            return
        if uid in self.runs:
            return
        phase = status.get("phase", "Pending")
        if phase == "Pending":
            self._start(pod)
        elif phase == "Running":
            # Started by an earlier runner whose processes are gone: the node "rebooted".
            self._patch(pod, self._failed_status(pod, "the sandbox pod runner restarted"))

    # -- lifecycle -------------------------------------------------------------------------

    def _allocate_ip(self) -> str:
        n = next(self._ips)
        return f"127.{244 + (n >> 16) % 10}.{(n >> 8) & 255}.{n & 255}"

    def _start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        run = PodRun(
            uid=meta["uid"],
            namespace=meta["namespace"],
            name=meta["name"],
            ip=self._allocate_ip(),
            folder=self.state / "pods" / f"{meta['namespace']}_{meta['name']}_{meta['uid'][:8]}",
        )
        (run.folder / "root").mkdir(parents=True, exist_ok=True)
        spec = pod["spec"]
        with self.lock:
            self.runs[run.uid] = run
            self.addresses[run.uid] = hosts.PodAddress(
                run.namespace,
                run.name,
                run.ip,
                podenv.pod_hostname(pod),
                spec.get("subdomain", ""),
                meta.get("labels") or {},
            )
        self._write_hosts()
        self._create_logs_object(pod, run)
        threading.Thread(target=self._supervise, args=(pod, run), daemon=True).start()

    def _supervise(self, pod: dict[str, Any], run: PodRun) -> None:
        spec = pod["spec"]
        started = now()
        try:
            for init in spec.get("initContainers") or []:
                code = self._run_once(pod, run, init, wait=True)
                if code != 0 and not run.stopping.is_set():
                    self._patch(
                        pod,
                        self._failed_status(
                            pod, f"init container {init['name']} exited with {code}"
                        ),
                    )
                    return
            self._patch(pod, self._status(pod, run, started))
            policy = spec.get("restartPolicy", "Always")
            pending = {c["name"]: c for c in spec["containers"]}
            for ctr in pending.values():
                self._run_once(pod, run, ctr, wait=False)
            self._patch(pod, self._status(pod, run, started))
            while pending and not run.stopping.is_set():
                run.exited.wait(1.0)
                run.exited.clear()
                for name in list(pending):
                    ctr = run.containers[name]
                    if ctr.exit_code is None:  # set by reap() once output is flushed
                        continue
                    if policy == "Always" or (policy == "OnFailure" and ctr.exit_code != 0):
                        self._patch(pod, self._status(pod, run, started))
                        if run.stopping.wait(min(10.0, 0.5 * 2 ** min(ctr.restarts, 5))):
                            break
                        ctr.restarts += 1
                        self._run_once(pod, run, pending[name], wait=False)
                        self._patch(pod, self._status(pod, run, started))
                    else:
                        del pending[name]
            if not run.stopping.is_set():
                self._patch(pod, self._status(pod, run, started, final=True))
        except Exception as exc:  # report, never crash the runner
            log.exception("pod %s/%s: %s", run.namespace, run.name, exc)

    def _run_once(
        self, pod: dict[str, Any], run: PodRun, spec: dict[str, Any], *, wait: bool
    ) -> int:
        name = spec["name"]
        ctr = run.containers.setdefault(name, Container(name))
        ctr.exit_code, ctr.finished_at, ctr.message = None, "", ""
        ctr.started_at = now()
        writer = CriLogWriter(run.folder / "logs" / f"{name}.log")
        try:
            env = podenv.container_env(
                pod, spec, pod_ip=run.ip, host_ip=HOST_IP, lookup=self._lookup
            )
            argv = podenv.container_argv(spec, env)
        except podenv.PodSpecError as exc:
            writer.write("stderr", str(exc).encode())
            writer.close()
            ctr.exit_code, ctr.finished_at, ctr.message = 128, now(), str(exc)
            return 128
        hostname = podenv.pod_hostname(pod)
        if self.namespaces:
            argv = [
                "unshare",
                "--mount",
                "--uts",
                "--propagation",
                "private",
                "--",
                "sh",
                "-c",
                _SHIM,
                str(self.hosts_dir / run.namespace),
                hostname,
                *argv,
            ]
        workdir = run.folder / "root" / str(spec.get("workingDir") or "").lstrip("/")
        workdir.mkdir(parents=True, exist_ok=True)
        base = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ") if k in os.environ}
        full_env = base | {"HOME": str(run.folder / "root"), "HOSTNAME": hostname} | env
        try:
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            writer.write("stderr", f"exec {argv[0]}: {exc.strerror}".encode())
            writer.close()
            ctr.exit_code, ctr.finished_at, ctr.message = 127, now(), str(exc)
            return 127
        ctr.proc = proc
        marker = self.state / "procs" / str(proc.pid)  # lets `sandbox down` kill what is left
        marker.parent.mkdir(exist_ok=True)
        marker.touch()
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [writer.pump(proc.stdout, "stdout"), writer.pump(proc.stderr, "stderr")]

        def reap() -> int:
            code = proc.wait()
            marker.unlink(missing_ok=True)
            for pump in pumps:
                pump.join(timeout=5)
            writer.close()
            ctr.exit_code = code if code >= 0 else 128 - code  # killed by signal N: 128+N
            ctr.finished_at = now()
            run.exited.set()
            return ctr.exit_code

        if wait:
            return reap()
        threading.Thread(target=reap, daemon=True).start()
        # poll() in _supervise sees the process end; exit_code is set by reap()
        return 0

    def _delete(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        run = self.runs.get(meta["uid"])
        grace = min(int(meta.get("deletionGracePeriodSeconds") or 0), 10)
        if run is not None:
            run.stopping.set()
            self._kill(run, grace)
        with contextlib.suppress(ApiException):
            self.core.delete_namespaced_pod(
                meta["name"],
                meta["namespace"],
                grace_period_seconds=0,
                body=client.V1DeleteOptions(
                    grace_period_seconds=0, preconditions=client.V1Preconditions(uid=meta["uid"])
                ),
            )

    def _kill(self, run: PodRun, grace: float) -> None:
        procs = [c.proc for c in run.containers.values() if c.proc and c.proc.poll() is None]
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

    def _forget(self, uid: str, *, kill: bool) -> None:
        with self.lock:
            run = self.runs.pop(uid, None)
            self.addresses.pop(uid, None)
        if run is not None:
            run.stopping.set()
            if kill:
                self._kill(run, 0)
            shutil.rmtree(run.folder, ignore_errors=True)
        self.hosts_dirty.set()

    def shutdown(self) -> None:
        """Kill every pod process (used on SIGTERM)."""
        self.stop.set()
        for run in list(self.runs.values()):
            run.stopping.set()
            self._kill(run, 2)

    # -- status ----------------------------------------------------------------------------

    def _status(
        self, pod: dict[str, Any], run: PodRun, started: str, *, final: bool = False
    ) -> dict[str, Any]:
        statuses, all_ok, any_running = [], True, False
        for spec in pod["spec"]["containers"]:
            ctr = run.containers.get(spec["name"], Container(spec["name"]))
            running = ctr.proc is not None and ctr.exit_code is None and ctr.proc.poll() is None
            any_running |= running
            if running or ctr.exit_code is None:
                state: dict[str, Any] = {"running": {"startedAt": ctr.started_at or started}}
            else:
                all_ok &= ctr.exit_code == 0
                state = {
                    "terminated": {
                        "exitCode": ctr.exit_code,
                        "reason": "Completed" if ctr.exit_code == 0 else "Error",
                        "startedAt": ctr.started_at,
                        "finishedAt": ctr.finished_at,
                        "containerID": f"gryvia://{run.uid}/{ctr.name}",
                        **({"message": ctr.message} if ctr.message else {}),
                    }
                }
            statuses.append(
                {
                    "name": spec["name"],
                    "image": spec.get("image", ""),
                    "imageID": spec.get("image", ""),
                    "containerID": f"gryvia://{run.uid}/{ctr.name}",
                    "ready": running,
                    "started": running,
                    "restartCount": ctr.restarts,
                    "state": state,
                }
            )
        phase = ("Succeeded" if all_ok else "Failed") if final else "Running"
        ready = "True" if any_running and not final else "False"
        return {
            "phase": phase,
            "podIP": run.ip,
            "podIPs": [{"ip": run.ip}],
            "hostIP": HOST_IP,
            "hostIPs": [{"ip": HOST_IP}],
            "startTime": started,
            "conditions": self._conditions(ready, "PodCompleted" if final else ""),
            "containerStatuses": statuses,
        }

    def _failed_status(self, pod: dict[str, Any], message: str) -> dict[str, Any]:
        return {
            "phase": "Failed",
            "reason": "Error",
            "message": message,
            "conditions": self._conditions("False", "PodFailed"),
        }

    @staticmethod
    def _conditions(ready: str, reason: str) -> list[dict[str, str]]:
        stamp = now()
        out = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp}]
        for kind in ("PodReadyToStartContainers", "Initialized"):
            out.append({"type": kind, "status": "True", "lastTransitionTime": stamp})
        for kind in ("ContainersReady", "Ready"):
            cond = {"type": kind, "status": ready, "lastTransitionTime": stamp}
            if reason and ready == "False":
                cond["reason"] = reason
            out.append(cond)
        return out

    def _patch(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            self.core.patch_namespaced_pod_status(
                meta["name"], meta["namespace"], {"status": status}
            )
        except ApiException as exc:
            if exc.status != 404:
                log.warning("status of %s/%s: %s", meta["namespace"], meta["name"], exc.reason)

    # -- helpers ---------------------------------------------------------------------------

    def _lookup(self, kind: str, namespace: str, name: str, key: str | None) -> Any:
        try:
            if kind == "ConfigMap":
                data = self.core.read_namespaced_config_map(name, namespace).data or {}
            else:
                raw = self.core.read_namespaced_secret(name, namespace).data or {}
                data = {k: base64.b64decode(v).decode() for k, v in raw.items()}
        except ApiException:
            return None
        return data if key is None else data.get(key)

    def _create_logs_object(self, pod: dict[str, Any], run: PodRun) -> None:
        meta = pod["metadata"]
        names = [c["name"] for c in pod["spec"]["containers"]]
        names += [c["name"] for c in pod["spec"].get("initContainers") or []]
        body = {
            "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
            "kind": "Logs",
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}
                ],
            },
            "spec": {
                "logs": [
                    {
                        "containers": [n],
                        "follow": True,
                        "logsFile": str(run.folder / "logs" / f"{n}.log"),
                    }
                    for n in names
                ]
            },
        }
        for n in names:
            (run.folder / "logs").mkdir(parents=True, exist_ok=True)
            (run.folder / "logs" / f"{n}.log").touch()
        try:
            self.custom.create_namespaced_custom_object(
                KWOK_GROUP, KWOK_VERSION, meta["namespace"], "logs", body
            )
        except ApiException as exc:
            if exc.status == 409:  # left from an earlier pod of the same name
                self.custom.delete_namespaced_custom_object(
                    KWOK_GROUP, KWOK_VERSION, meta["namespace"], "logs", meta["name"]
                )
                self.custom.create_namespaced_custom_object(
                    KWOK_GROUP, KWOK_VERSION, meta["namespace"], "logs", body
                )
            else:
                log.warning("logs of %s/%s: %s", meta["namespace"], meta["name"], exc.reason)

    def _write_hosts_loop(self) -> None:
        while not self.stop.is_set():
            if self.hosts_dirty.wait(1.0):
                self.hosts_dirty.clear()
                self._write_hosts()

    def _write_hosts(self) -> None:
        """Write one hosts file per namespace with pods: names relative to that namespace
        resolve there, as a pod's DNS search path (`<ns>.svc.cluster.local`) makes them."""
        with self.lock:
            pods = list(self.addresses.values())
            services = list(self.services.values())
        for namespace in sorted({p.namespace for p in pods}):
            data = hosts.render_hosts(pods, services, namespace=namespace).encode()
            path = self.hosts_dir / namespace
            path.touch()
            # Rewrite in place: pods bind-mount this very inode as their /etc/hosts.
            with path.open("r+b") as fh:
                if fh.read() != data:
                    fh.seek(0)
                    fh.write(data)
                    fh.truncate()


def main(argv: list[str] | None = None) -> None:
    """Entry point of the runner daemon."""
    parser = argparse.ArgumentParser(prog="gryvia-sandbox-runner")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--state", required=True, type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    conf = client.Configuration()
    config.load_kube_config(config_file=args.kubeconfig, client_configuration=conf)
    conf.connection_pool_maxsize = 32
    api = client.ApiClient(conf)
    args.state.mkdir(parents=True, exist_ok=True)
    runner = PodRunner(api, args.state, namespaces=can_use_namespaces())
    log.info("pod runner started (namespaces: %s)", runner.namespaces)

    def on_term(signum: int, frame: object) -> None:
        runner.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    runner.run()


if __name__ == "__main__":
    main()
