"""Fluent builders of test objects: `make_job("a").gpus(8).gpu_type("H100").obj()`,
`make_node("n").gpus(8).product("NVIDIA-H100-80GB-HBM3").obj()`, pods and batch Jobs.

Every GryviaAIJob a test builds comes from `JobBuilder`: `.obj()` is the object as the
operator sees it (uid, resourceVersion, generation), `.manifest()` the one a user submits;
`sh_job` is the `sh -c` job of the cluster tests."""

from __future__ import annotations

import copy
import json
from typing import Any, Self

from gryvia_operator.api import GryviaAIJob
from gryvia_operator.reconcile.views import ChildView, NodeView, PodView

H100_PRODUCT = "NVIDIA-H100-80GB-HBM3"


class JobBuilder:
    """A GryviaAIJob: a 1-GPU training job of image pytorch:24.01 in `namespace` ("ml" when
    none is given), uid `uid-<name>`, generation 1, resourceVersion "1"."""

    def __init__(self, name: str, namespace: str | None = None) -> None:
        self._namespaced = namespace is not None
        if namespace is None:
            namespace = "ml"
        self._obj: dict[str, Any] = {
            "apiVersion": "gryvia.io/v1alpha1",
            "kind": "GryviaAIJob",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{name}",
                "generation": 1,
                "resourceVersion": "1",
            },
            "spec": {"type": "training", "gpus": 1, "image": "pytorch:24.01"},
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._obj["spec"]
        return spec

    def set(self, **fields: Any) -> Self:
        """Set raw spec fields (camelCase)."""
        self._spec.update(fields)
        return self

    def type(self, value: str) -> Self:
        return self.set(type=value)

    def gpus(self, count: int) -> Self:
        return self.set(gpus=count)

    def gpu_type(self, value: str) -> Self:
        return self.set(gpuType=value)

    def network(self, value: str) -> Self:
        return self.set(network=value)

    def image(self, value: str) -> Self:
        return self.set(image=value)

    def command(self, *argv: str) -> Self:
        return self.set(command=list(argv))

    def script(self, text: str) -> Self:
        """Run `text` under a shell: command `["sh", "-c", text]`."""
        return self.command("sh", "-c", text)

    def unset(self, *fields: str) -> Self:
        """Remove spec fields (camelCase), the defaults included."""
        for field in fields:
            self._spec.pop(field, None)
        return self

    def env(self, name: str, value: str) -> Self:
        self._spec.setdefault("env", []).append({"name": name, "value": value})
        return self

    def distributed(
        self,
        nodes: int,
        *,
        backend: str | None = None,
        gpus_per_node: int | None = None,
        framework: str | None = None,
        min_nodes: int | None = None,
    ) -> Self:
        dist: dict[str, Any] = {"enabled": True, "nodes": nodes}
        if backend:
            dist["backend"] = backend
        if gpus_per_node is not None:
            dist["gpusPerNode"] = gpus_per_node
        if framework:
            dist["framework"] = framework
        if min_nodes is not None:
            dist["elastic"] = {"minNodes": min_nodes}
        return self.set(distributed=dist)

    def storage(self, storage_class: str, size: str | None = None) -> Self:
        self.set(storage=storage_class)
        return self.set(storageRequest=size) if size else self

    def retry_limit(self, count: int) -> Self:
        return self.set(retryLimit=count)

    def timeout(self, value: str) -> Self:
        return self.set(timeout=value)

    def suspend(self, value: bool = True) -> Self:
        return self.set(suspend=value)

    def workload_kind(self, value: str) -> Self:
        return self.set(workloadKind=value)

    def node_selector(self, **labels: str) -> Self:
        return self.set(nodeSelector=labels)

    def annotate(self, key: str, value: str) -> Self:
        self._obj["metadata"].setdefault("annotations", {})[key] = value
        return self

    def label(self, key: str, value: str) -> Self:
        self._obj["metadata"].setdefault("labels", {})[key] = value
        return self

    def meta(self, **fields: Any) -> Self:
        """Set raw metadata fields (camelCase), replacing any there: `labels={...}`,
        `resourceVersion="10"`, `creationTimestamp="2026-12-02T07:00:00Z"`."""
        self._obj["metadata"].update(fields)
        return self

    def uid(self, value: str) -> Self:
        self._obj["metadata"]["uid"] = value
        return self

    def generation(self, value: int) -> Self:
        self._obj["metadata"]["generation"] = value
        return self

    def status(self, **fields: Any) -> Self:
        """Set raw status fields (camelCase)."""
        self._obj.setdefault("status", {}).update(fields)
        return self

    def phase(self, value: str) -> Self:
        return self.status(phase=value)

    def condition(self, kind: str, status: str, reason: str = "", message: str = "") -> Self:
        conditions = self._obj.setdefault("status", {}).setdefault("conditions", [])
        conditions.append(
            {
                "type": kind,
                "status": status,
                "reason": reason or kind,
                "message": message,
                "lastTransitionTime": "2025-01-01T00:00:00Z",
            }
        )
        return self

    def obj(self) -> dict[str, Any]:
        """The object as the operator sees it (a deep copy)."""
        return copy.deepcopy(self._obj)

    def manifest(self) -> dict[str, Any]:
        """The object as a user submits it (a deep copy): apiVersion, kind, metadata and spec;
        without status or server-owned metadata (uid, resourceVersion, generation,
        creationTimestamp); the namespace only when one was given to the builder."""
        obj = self.obj()
        obj.pop("status", None)
        meta = obj["metadata"]
        for key in ("uid", "resourceVersion", "generation", "creationTimestamp"):
            meta.pop(key, None)
        if not self._namespaced:
            del meta["namespace"]
        return obj

    def model(self) -> GryviaAIJob:
        """The parsed model."""
        return GryviaAIJob.model_validate(self._obj)


class NodeBuilder:
    """A Node, Ready, with no GPUs until `gpus` is called."""

    def __init__(self, name: str) -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "labels": {}},
            "spec": {},
            "status": {
                "allocatable": {"cpu": "64", "memory": "512Gi"},
                "capacity": {"cpu": "64", "memory": "512Gi"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def label(self, key: str, value: str) -> Self:
        self._obj["metadata"]["labels"][key] = value
        return self

    def gpus(self, count: int, *, allocatable: int | None = None) -> Self:
        """GFD count label and capacity `count`; allocatable defaults to the same."""
        self._obj["status"]["capacity"]["nvidia.com/gpu"] = str(count)
        alloc = count if allocatable is None else allocatable
        self._obj["status"]["allocatable"]["nvidia.com/gpu"] = str(alloc)
        return self.label("nvidia.com/gpu.count", str(count))

    def product(self, product: str = H100_PRODUCT, *, memory_mib: int = 81559) -> Self:
        """GFD labels of a GPU node of `product`, driver 550.127.08, CUDA 12.4."""
        for key, value in {
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.memory": str(memory_mib),
            "nvidia.com/cuda.driver.major": "550",
            "nvidia.com/cuda.driver.minor": "127",
            "nvidia.com/cuda.driver.rev": "08",
            "nvidia.com/cuda.runtime.major": "12",
            "nvidia.com/cuda.runtime.minor": "4",
        }.items():
            self.label(key, value)
        return self

    def rdma_capable(self) -> Self:
        return self.label("feature.node.kubernetes.io/rdma.capable", "true")

    def gpu_type(self, value: str) -> Self:
        """The gryvia.io/gpu label registration writes."""
        return self.label("gryvia.io/gpu", value)

    def rdma(self) -> Self:
        return self.label("gryvia.io/rdma", "true")

    def not_ready(self) -> Self:
        self._obj["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
        return self

    def cordoned(self) -> Self:
        self._obj["spec"]["unschedulable"] = True
        return self

    def in_maintenance(self, reason: str, since: str = "2026-12-01T13:00:00Z") -> Self:
        """Cordoned with the annotations `gryvia maintenance start` writes."""
        from gryvia_operator.api.names import ANNOTATION_MAINTENANCE, ANNOTATION_MAINTENANCE_REASON

        notes = self._obj["metadata"].setdefault("annotations", {})
        notes.update({ANNOTATION_MAINTENANCE: since, ANNOTATION_MAINTENANCE_REASON: reason})
        return self.cordoned()

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        taint = {"key": key, "effect": effect, **({"value": value} if value else {})}
        self._obj["spec"].setdefault("taints", []).append(taint)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)

    def view(self) -> NodeView:
        return NodeView.from_node(self._obj)


class PodBuilder:
    """A Pod, Running, with one container."""

    def __init__(self, name: str, namespace: str = "ml") -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {}},
            "spec": {"containers": [{"name": "c", "resources": {}}]},
            "status": {"phase": "Running"},
        }

    def on(self, node: str) -> Self:
        self._obj["spec"]["nodeName"] = node
        return self

    def gpus(self, count: int) -> Self:
        self._obj["spec"]["containers"][0]["resources"] = {
            "limits": {"nvidia.com/gpu": str(count)},
            "requests": {"nvidia.com/gpu": str(count)},
        }
        return self

    def phase(self, value: str) -> Self:
        self._obj["status"]["phase"] = value
        return self

    def job(self, name: str) -> Self:
        self._obj["metadata"]["labels"]["gryvia.io/job"] = name
        return self

    def ready(self) -> Self:
        self._obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)

    def view(self) -> PodView:
        return PodView.from_pod(self._obj)


class ChildBuilder:
    """A child of a job (batch Job by default), owned by job `owner` with uid `uid-<owner>`."""

    def __init__(self, kind: str, name: str, owner: str, namespace: str = "ml") -> None:
        self._obj: dict[str, Any] = {
            "kind": kind,
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{kind}-{name}",
                "resourceVersion": "5",
                "ownerReferences": [
                    {
                        "apiVersion": "gryvia.io/v1alpha1",
                        "kind": "GryviaAIJob",
                        "name": owner,
                        "uid": f"uid-{owner}",
                        "controller": True,
                    }
                ],
            },
            "spec": {},
            "status": {},
        }

    def owner_uid(self, uid: str) -> Self:
        self._obj["metadata"]["ownerReferences"][0]["uid"] = uid
        return self

    def spec(self, **fields: Any) -> Self:
        self._obj["spec"].update(fields)
        return self

    def status(self, **fields: Any) -> Self:
        self._obj["status"].update(fields)
        return self

    def condition(self, kind: str, reason: str = "", message: str = "") -> Self:
        conditions = self._obj["status"].setdefault("conditions", [])
        conditions.append(
            {
                "type": kind,
                "status": "True",
                "reason": reason,
                "message": message,
                "lastTransitionTime": "2025-01-01T01:00:00Z",
            }
        )
        return self

    def deleting(self) -> Self:
        self._obj["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)

    def view(self) -> ChildView:
        return ChildView.from_object(self._obj)


def make_job(name: str = "train", namespace: str | None = None) -> JobBuilder:
    """A valid single-pod, 1-GPU training job named `name` in `namespace` ("ml" in `.obj()`
    when none is given; `.manifest()` then leaves the namespace out)."""
    return JobBuilder(name, namespace)


def sh_job(
    name: str,
    *,
    gpus: int = 8,
    gpu_type: str = "A100-80G",
    script: str = "sleep 1",
    namespace: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A training GryviaAIJob manifest that runs `sh -c script` on `gpus` GPUs of `gpu_type`
    (image "none"; in `namespace`, else the one it is applied in); more spec fields
    (retryLimit, timeout, suspend, ...) as keyword arguments. Shape:
    `{"apiVersion", "kind", "metadata": {"name"[, "namespace"]}, "spec": {"type": "training",
    "gpus", "image": "none", "gpuType", "command": ["sh", "-c", script], **spec}}`."""
    builder = JobBuilder(name, namespace).image("none").gpus(gpus).gpu_type(gpu_type)
    return builder.script(script).set(**spec).manifest()


def make_node(name: str = "node-a") -> NodeBuilder:
    """A Ready node without GPUs."""
    return NodeBuilder(name)


def make_pod(name: str = "pod-a", namespace: str = "ml") -> PodBuilder:
    """A Running pod without GPUs."""
    return PodBuilder(name, namespace)


def make_child(kind: str, name: str, owner: str = "train", namespace: str = "ml") -> ChildBuilder:
    """A child object of `kind` named `name`, owned by job `owner`."""
    return ChildBuilder(kind, name, owner, namespace)


def gpu_node(name: str, gpu_type: str, gpus: int = 8) -> NodeView:
    """A registered GPU node view: gryvia.io/gpu and gpu-count labels, allocatable GPUs."""
    builder = make_node(name).gpus(gpus).gpu_type(gpu_type).label("gryvia.io/gpu-count", str(gpus))
    return builder.view()


def job_yaml(
    name: str,
    *,
    gpus: int | str = 1,
    gpu_type: str | None = "H100",
    image: str = "busybox",
    command: str | None = '["echo", "hi"]',
    extra: str = "",
    script: str | None = None,
) -> str:
    """A GryviaAIJob manifest as a user writes it (YAML text). `command` is the flow-style
    YAML list (None leaves it out), or `script` runs under `sh -c`; `gpu_type` None leaves
    the type out; `extra` adds lines under `spec:` (indent them by two)."""
    if script is not None:
        command = f'["sh", "-c", {json.dumps(script)}]'
    lines = [
        "apiVersion: gryvia.io/v1alpha1",
        "kind: GryviaAIJob",
        "metadata:",
        f"  name: {name}",
        "spec:",
        "  type: training",
        f"  gpus: {gpus}",
        *([f"  gpuType: {gpu_type}"] if gpu_type else []),
        f"  image: {image}",
    ]
    if command is not None:
        lines.append(f"  command: {command}")
    return "\n".join(lines) + "\n" + extra
