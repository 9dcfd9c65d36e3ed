"""The sandbox's pod runner: a tiny kubelet that runs scheduled pods as local processes.

kwok-controller keeps the simulated nodes Ready; this process does what a kubelet does for the
pods the real kube-scheduler bound to them: gives each pod its own network (a network namespace
on the sandbox's bridge, see `netplan`; without root, a 127.x.y.z loopback address in the host's
network), runs init containers then containers (`command`+`args`, env resolved as the
kubelet does, `workingDir` under a per-pod folder), writes their output as CRI log files that
kwok serves to `kubectl logs`, reports phase and container states, restarts containers as the
`restartPolicy` says, and kills the processes when the pod is deleted. Images are not pulled;
the real node's pods are its kubelet's (`realnode`). Usage: `python -m gryvia_cli.sandbox.runner -h`
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes import client, config

from gryvia_cli.sandbox import (
    crilog,
    hosts,
    netplan,
    podenv,
    podforwards,
    podnet,
    podstatus,
    podvolumes,
    probes,
)
from gryvia_cli.sandbox.hostsfiles import HostsFiles
from gryvia_cli.sandbox.netplan import SandboxNet
from gryvia_cli.sandbox.nodeconf import SIMULATED_PODS
from gryvia_cli.sandbox.podapi import PodApi
from gryvia_cli.sandbox.podleases import PodLeases
from gryvia_cli.sandbox.podstatus import now
from gryvia_cli.sandbox.processes import (
    Container,
    PodRun,
    can_use_namespaces,
    fail_container,
    kill_run,
    namespaced_argv,
    start_container,
)
from gryvia_cli.sandbox.watchloop import watch_forever

__all__ = ["Container", "PodRun", "PodRunner", "can_use_namespaces", "main"]

log = logging.getLogger("gryvia.sandbox.runner")

HOST_IP = "127.0.0.1"


class PodRunner:
    """Watches pods bound to nodes and runs them. Thread-safe; one instance per sandbox."""

    def __init__(
        self,
        api: client.ApiClient,
        state: Path,
        *,
        namespaces: bool,
        network: SandboxNet | None = None,
    ) -> None:
        self.api = PodApi(api)
        self.state = state
        self.namespaces = namespaces
        self.hosts = HostsFiles(state / "hosts")
        self.runs: dict[str, PodRun] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.network = network if namespaces else None
        self.leases = PodLeases(self.network)

    # -- watches ---------------------------------------------------------------------------

    def run(self) -> None:
        """Watch services and pods until `stop` is set."""
        threading.Thread(target=self._watch_services, daemon=True).start()
        threading.Thread(target=self.hosts.loop, args=(self.stop,), daemon=True).start()
        threading.Thread(
            target=podforwards.forward_loop, args=(self.api, self._runs, self.stop), daemon=True
        ).start()
        watch_forever(
            self.api.core.list_pod_for_all_namespaces,
            self.on_pod,
            self.stop,
            field_selector=SIMULATED_PODS,
        )

    def _runs(self) -> list[PodRun]:
        with self.lock:  # other threads add and remove runs
            return list(self.runs.values())

    def _watch_services(self) -> None:
        watch_forever(
            self.api.core.list_service_for_all_namespaces, self.hosts.on_service, self.stop
        )

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
        if phase == "Pending" and (why := podstatus.cannot_run(pod)):  # said once, not started
            if status.get("reason") != podstatus.CANNOT_RUN:
                self.api.patch_status(pod, podstatus.build_cannot_run_status(pod, why, now()))
        elif phase == "Pending":
            self._start(pod)
        elif phase == "Running":
            # Started by an earlier runner whose processes are gone: the node "rebooted".
            self.api.patch_status(
                pod, podstatus.build_failed_status("the sandbox pod runner restarted", now())
            )

    # -- lifecycle -------------------------------------------------------------------------

    def _release_network(self, uid: str) -> None:
        """Remove the pod's namespace and give its address back, once (a finished pod keeps
        its status.podIP, as in Kubernetes, but no longer its address or its DNS names)."""
        if self.leases.release(uid):
            self.hosts.drop_pod(uid)

    def _start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            ip = self.leases.lease(meta["uid"], host_network=bool(pod["spec"].get("hostNetwork")))
        except (netplan.NetworkPlanError, podnet.NetworkError) as exc:
            log.warning("network of %s/%s: %s", meta["namespace"], meta["name"], exc)
            self.api.patch_status(pod, podstatus.build_failed_status(f"pod network: {exc}", now()))
            return
        run = PodRun(
            uid=meta["uid"],
            namespace=meta["namespace"],
            name=meta["name"],
            ip=ip,
            node=pod["spec"].get("nodeName", ""),
            netns=self.leases.netns(meta["uid"]),
            folder=self.state / "pods" / f"{meta['namespace']}_{meta['name']}_{meta['uid'][:8]}",
        )
        (run.folder / "root").mkdir(parents=True, exist_ok=True)
        spec = pod["spec"]
        with self.lock:
            self.runs[run.uid] = run
        address = hosts.PodAddress(
            run.namespace,
            run.name,
            run.ip,
            podenv.pod_hostname(pod),
            spec.get("subdomain", ""),
            meta.get("labels") or {},
        )
        self.hosts.add_pod(run.uid, address)
        self.api.create_logs(pod, run.folder / "logs")
        threading.Thread(target=self._supervise, args=(pod, run), daemon=True).start()

    def _supervise(self, pod: dict[str, Any], run: PodRun) -> None:
        spec = pod["spec"]
        started = now()
        try:
            for init in spec.get("initContainers") or []:
                code = self._run_once(pod, run, init, wait=True)
                if code != 0 and not run.stopping.is_set():
                    message = f"init container {init['name']} exited with {code}"
                    self.api.patch_status(pod, podstatus.build_failed_status(message, now()))
                    self._release_network(run.uid)
                    return
            self.api.patch_status(pod, self._status(pod, run, started))
            policy = spec.get("restartPolicy", "Always")
            pending = {c["name"]: c for c in spec["containers"]}
            probed = {name for name, c in pending.items() if c.get("readinessProbe")}
            run.unready = set(probed)
            for ctr in pending.values():
                self._run_once(pod, run, ctr, wait=False)
            podforwards.publish(self.api, run, pod)  # `kubectl exec`, `port-forward` from now on
            self.api.patch_status(pod, self._status(pod, run, started))
            while pending and not run.stopping.is_set():
                run.exited.wait(1.0)
                run.exited.clear()
                if probed and self._probe(pod, run, probed):
                    self.api.patch_status(pod, self._status(pod, run, started))
                for name in list(pending):
                    ctr = run.containers[name]
                    if ctr.exit_code is None:  # set by reap() once output is flushed
                        continue
                    if policy == "Always" or (policy == "OnFailure" and ctr.exit_code != 0):
                        self.api.patch_status(pod, self._status(pod, run, started))
                        if run.stopping.wait(min(10.0, 0.5 * 2 ** min(ctr.restarts, 5))):
                            break
                        ctr.restarts += 1
                        run.unready |= probed & {name}  # probed again before it is Ready
                        crilog.keep_previous_log(run.folder / "logs", name)
                        self._run_once(pod, run, pending[name], wait=False)
                        self.api.patch_status(pod, self._status(pod, run, started))
                    else:
                        del pending[name]
            if not run.stopping.is_set():
                self.api.patch_status(pod, self._status(pod, run, started, final=True))
                self._release_network(run.uid)
        except Exception as exc:  # report, never crash the runner
            log.exception("pod %s/%s: %s", run.namespace, run.name, exc)

    def _probe(self, pod: dict[str, Any], run: PodRun, probed: set[str]) -> bool:
        """Run the readiness probes of `run`'s running probed containers; update
        `run.unready` and return True when it changed."""
        alive = run.alive()
        unready = set()
        for spec in pod["spec"]["containers"]:
            name = spec["name"]
            if name not in probed or name not in alive:
                continue
            cwd, env = run.exec_targets.get(name, (None, None))
            if not probes.probe_ready(spec, run.ip, netns=run.netns, cwd=cwd, env=env):
                unready.add(name)
        changed = unready != run.unready
        run.unready = unready
        return changed

    def _run_once(
        self, pod: dict[str, Any], run: PodRun, spec: dict[str, Any], *, wait: bool
    ) -> int:
        name = spec["name"]
        ctr = run.containers.setdefault(name, Container(name))
        ctr.exit_code, ctr.finished_at, ctr.message = None, "", ""
        delay = 0.5
        while True:
            try:
                env = podenv.container_env(
                    pod, spec, pod_ip=run.ip, host_ip=HOST_IP, lookup=self.api.lookup
                )
                argv = podenv.container_argv(spec, env)
                break
            except podenv.MissingReferenceError as exc:
                # As the kubelet does (CreateContainerConfigError): wait and try again
                # until the ConfigMap or Secret exists or the pod is deleted.
                if ctr.message != str(exc):  # say so in the pod's status once
                    ctr.message = str(exc)
                    started = str((pod.get("status") or {}).get("startTime") or now())
                    self.api.patch_status(pod, self._status(pod, run, started))
                if run.stopping.wait(delay):
                    return fail_container(ctr, run.folder / "logs" / f"{name}.log", 128, str(exc))
                delay = min(delay * 2, 10.0)
            except podenv.PodSpecError as exc:
                ctr.started_at = now()
                return fail_container(ctr, run.folder / "logs" / f"{name}.log", 128, str(exc))
        ctr.message = ""
        ctr.started_at = now()
        hostname = podenv.pod_hostname(pod)
        if self.namespaces:
            argv = namespaced_argv(argv, self.hosts.path(run.namespace), hostname)
        if run.netns:
            argv = netplan.netns_argv(run.netns, argv)
        root = run.folder / "root"
        podvolumes.link_claims(pod, spec, root, self.state, self.api.claim_folder)
        workdir = podvolumes.rooted(root, str(spec.get("workingDir") or ""))
        workdir.mkdir(parents=True, exist_ok=True)
        base = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ") if k in os.environ}
        # A container's /tmp is its own: pods share the host's, so each gets a TMPDIR (two array
        # elements unpacking the Slurm runtime into one /tmp/gryvia-slurm-0 clashed).
        tmp = run.folder / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        own = {"HOME": str(root), "HOSTNAME": hostname, "TMPDIR": str(tmp)}
        full_env = base | own | env
        if str(env.get("HOME") or "").startswith("/"):  # a HOME the pod sets is in its root
            full_env["HOME"] = str(podvolumes.rooted(root, env["HOME"]))
        if spec in pod["spec"]["containers"]:
            run.exec_targets[name] = (str(workdir), full_env)
        markers, gpus = self.state / "procs", podenv.gpu_count(spec)
        return start_container(
            run, ctr, argv, env=full_env, cwd=workdir, markers=markers, wait=wait, gpus=gpus
        )

    def _delete(self, pod: dict[str, Any]) -> None:
        """Stop a pod being deleted as a kubelet does: kill its containers (SIGTERM, SIGKILL
        after the grace period, at most 10 s), report its terminal phase, give its network back
        and finish the deletion. Since Kubernetes 1.27 a deleted pod that had not ended is
        reported Failed (Succeeded when every container exited 0) before it goes, so the batch
        Job controller counts it (its job-tracking finalizer waits for that). A pod with
        finalizers stays, with that status and its logs, until they are removed (`_forget`).
        """
        meta = pod["metadata"]
        run = self.runs.get(meta["uid"])
        grace = min(int(meta.get("deletionGracePeriodSeconds") or 0), 10)
        if run is not None:
            run.stopping.set()
            kill_run(run, grace)
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                self._settle(pod, run)
                started = (pod.get("status") or {}).get("startTime") or now()
                self.api.patch_status(pod, self._status(pod, run, started, final=True))
            self._release_network(run.uid)
        self.api.delete_now(pod)

    def _settle(self, pod: dict[str, Any], run: PodRun) -> None:
        """Give every container of a killed pod an exit code: its process's (reaped within
        5 s), else 137 (killed, or never started) as the kubelet reports."""
        for spec in pod["spec"]["containers"]:
            ctr = run.containers.setdefault(spec["name"], Container(spec["name"]))
            if ctr.proc is not None and ctr.exit_code is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    ctr.proc.wait(timeout=5)
                deadline = time.monotonic() + 5
                while ctr.exit_code is None and time.monotonic() < deadline:
                    run.exited.wait(0.1)  # reap() sets the code once output is flushed
            if ctr.exit_code is None:
                ctr.exit_code, ctr.finished_at = 137, now()
                ctr.message = ctr.message or "the pod was deleted"

    def _forget(self, uid: str, *, kill: bool) -> None:
        with self.lock:
            run = self.runs.pop(uid, None)
        self.hosts.drop_pod(uid)
        if run is not None:
            run.stopping.set()
            if kill:
                kill_run(run, 0)
            self._release_network(uid)
            shutil.rmtree(run.folder, ignore_errors=True)

    def shutdown(self) -> None:
        """Kill every pod process (used on SIGTERM)."""
        self.stop.set()
        for run in list(self.runs.values()):
            run.stopping.set()
            kill_run(run, 2)

    # -- status ----------------------------------------------------------------------------

    def _status(
        self, pod: dict[str, Any], run: PodRun, started: str, *, final: bool = False
    ) -> dict[str, Any]:
        return podstatus.build_status(
            pod,
            uid=run.uid,
            pod_ip=run.ip,
            host_ip=HOST_IP,
            started=started,
            containers=run.containers,
            alive=run.alive(),
            stamp=now(),
            final=final,
            unready=run.unready,
        )


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
    namespaces = can_use_namespaces()
    network = podnet.load(args.state) if namespaces else None
    if network is not None:
        podnet.remove_pod_leftovers(network)
        log.info("pods get their own network on %s (%s)", network.bridge, network.subnet)
    else:
        log.warning(
            "pods share the host network with 127.244.x.y addresses: two pods listening on one "
            "port collide, and EndpointSlices refuse these addresses"
        )
    runner = PodRunner(api, args.state, namespaces=namespaces, network=network)
    log.info("pod runner started (namespaces: %s)", runner.namespaces)

    def on_term(signum: int, frame: object) -> None:
        runner.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    runner.run()


if __name__ == "__main__":
    main()
