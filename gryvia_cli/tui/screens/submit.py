"""The Submit view: a job form with a live YAML preview and validation, or a YAML manifest /
sbatch script opened from disk with its import report shown before anything is created."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import yaml
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, VerticalScroll
from textual.highlight import highlight
from textual.widgets import Input, Label, Select, Static

from gryvia_cli.core.estimate import estimate_cost
from gryvia_cli.core.jobs import summarize_job
from gryvia_cli.core.manifests import JobForm, build_job_manifest, check_text
from gryvia_cli.core.plaintext import visible
from gryvia_cli.core.plan import plan_job
from gryvia_cli.errors import GryviaError
from gryvia_cli.sbatch import convert_file, render_text
from gryvia_cli.tui.bindings import SUBMIT, bindings, write_actions
from gryvia_cli.tui.messages import JobsSubmitted
from gryvia_cli.tui.screens.base import ViewScreen
from gryvia_cli.tui.screens.dialogs import PromptDialog
from gryvia_cli.tui.store import Change
from gryvia_cli.tui.widgets.findings import Findings
from gryvia_cli.tui.widgets.textfield import FORM_CLASS, FormSelect, TextField
from gryvia_cli.usertext import user_text
from gryvia_operator.api import GryviaQuota, GryviaTenant, validate_job
from gryvia_operator.api.aijob import JOB_TYPES

FIELDS = (
    ("name", "Name", "my-training-run"),
    ("namespace", "Namespace", "default"),
    ("image", "Image", "registry/image:tag"),
    ("gpus", "GPUs/pod", "1"),
    ("nodes", "Nodes", "1"),
    ("command", "Command", "python train.py --epochs 3"),
    ("storage", "Storage", "StorageClass for /data (optional)"),
)


def job_key(job: dict[str, Any], namespace: str | None) -> str:
    """`namespace/name` of a job about to be created (`name…` for a generateName)."""
    meta = job.get("metadata") or {}
    name = meta.get("name") or f"{meta.get('generateName') or 'job-'}…"
    return f"{meta.get('namespace') or namespace or 'default'}/{name}"


class SubmitScreen(ViewScreen):
    """Compose a job (or open a file), check it, submit it."""

    VIEW = "submit"
    BINDINGS: ClassVar = bindings(SUBMIT)
    WRITE_ACTIONS: ClassVar = write_actions(SUBMIT)

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[dict[str, Any]] = []
        self.runtime: dict[str, Any] | None = None
        self.findings: list[tuple[str, str]] = []
        self.loaded_from: str | None = None
        self.loaded_text = ""
        self._preview_due = False

    def compose_body(self) -> ComposeResult:
        """Form on the left, preview and findings on the right."""
        with Horizontal(id="submit-body"):
            with VerticalScroll(id="submit-form", can_focus=False):
                with Grid(id="submit-grid", classes=FORM_CLASS):
                    # a text field first: a tab past the last field wraps to where typing lands
                    yield from self._text_field(*FIELDS[0])
                    yield Label("Type")
                    yield FormSelect(
                        ((t, t) for t in JOB_TYPES),
                        value="training",
                        allow_blank=False,
                        compact=True,
                        id="f-type",
                    )
                    yield Label("GPU type")
                    yield FormSelect(
                        [("any", "any")],
                        value="any",
                        allow_blank=False,
                        compact=True,
                        id="f-gpu_type",
                    )
                    for key, label, hint in FIELDS[1:]:
                        yield from self._text_field(key, label, hint)
                yield Static(id="submit-source", classes="status-line")
            with VerticalScroll(id="submit-preview"):
                yield Findings(id="submit-findings")
                yield Static(id="submit-yaml")

    @staticmethod
    def _text_field(key: str, label: str, hint: str) -> ComposeResult:
        yield Label(label)
        yield TextField(placeholder=hint, compact=True, id=f"f-{key}")

    def on_mount(self) -> None:
        """Defaults from the target, focus trapped in the form, first preview."""
        super().on_mount()
        self.query_one("#submit-grid").trap_focus()
        self._fill_defaults()
        self.set_focus(self.query_one("#f-name", Input))
        self._preview()

    def _fill_defaults(self) -> None:
        """An empty form: the target's namespace, 1 GPU, 1 node, type training, any GPU."""
        defaults = {"namespace": self.console.target.namespace or "default", "gpus": "1"}
        defaults["nodes"] = "1"
        for key, _, _ in FIELDS:
            self.query_one(f"#f-{key}", Input).value = defaults.get(key, "")
        self.query_one("#f-type", Select).value = "training"
        self.query_one("#f-gpu_type", Select).value = "any"

    def refresh_view(self, change: Change | None) -> None:
        """Offer the GPU types the cluster has."""
        if change is not None and not change.kinds & {"gpunodes", "nodes"}:
            return
        types = sorted({n.gpu_type for n in self.store.gpu_nodes()})
        select = self.query_one("#f-gpu_type", Select)
        current = select.value
        select.set_options([("any", "any"), *((user_text(t), t) for t in types)])
        select.value = current if current in ("any", *types) else "any"

    def _form(self) -> JobForm:
        values = {key: self.query_one(f"#f-{key}", Input).value for key, _, _ in FIELDS}
        values["type"] = str(self.query_one("#f-type", Select).value)
        values["gpu_type"] = str(self.query_one("#f-gpu_type", Select).value)
        return JobForm(**values)

    @on(Input.Changed)
    @on(Select.Changed)
    def _changed(self) -> None:
        # a burst of keys (or a reset) changes many fields: one preview after them, not one
        # per key
        if self.loaded_from is None and not self._preview_due:
            self._preview_due = True
            self.call_after_refresh(self._preview)

    def _preview(self) -> None:
        """Build, validate and show the job of the form."""
        self._preview_due = False
        if self.loaded_from is not None:
            return
        job = build_job_manifest(self._form())
        result = validate_job(job)
        self.jobs, self.runtime = [job], None
        self.findings = [("error", e.text()) for e in result.errors]
        self.findings += [("warn", w.text()) for w in result.warnings]
        if result.ok:
            summary = summarize_job(job)
            plan = plan_job(summary, self.store.gpu_nodes(), self.store.allocated())
            self.findings += [("info", line.strip()) for line in plan.lines()[1:]]
            if plan.warning:
                self.findings.append(("warn", plan.warning))
            store, ns = self.store, job["metadata"].get("namespace") or "default"
            tenants = store.models("tenants", GryviaTenant)
            quotas = store.models("quotas", GryviaQuota)
            estimate = estimate_cost(summary, ns, store.skus(), tenants, quotas)
            if estimate is not None:
                self.findings += [("info", line.strip()) for line in estimate.lines()]
                self.findings += [("warn", w) for w in estimate.warnings]
        self._show(yaml.safe_dump(job, sort_keys=False))

    def _show(self, text: str) -> None:
        errors = sum(1 for kind, _ in self.findings if kind == "error")
        ready = f"ready to submit {len(self.jobs)} job(s): ctrl+s"
        if self.console.readonly:
            ready = "valid; this console is read-only, so it cannot submit"
        self.query_one(Findings).show(self.findings, ready)
        self.query_one("#submit-yaml", Static).update(
            highlight(visible(text, multiline=True), language="yaml")
        )
        self.set_class(bool(errors), "-invalid")

    # -- files -----------------------------------------------------------------------------

    def action_open_file(self) -> None:
        """Ask for a YAML manifest or sbatch script and load it."""
        here = Path.cwd()
        names = sorted(
            str(p)
            for p in here.iterdir()
            if p.suffix in {".yaml", ".yml", ".sh", ".sbatch", ".slurm"}
        )
        self.app.push_screen(
            PromptDialog("Open a YAML manifest or an sbatch script", "path/to/job.yaml", names),
            self._load,
        )

    def _load(self, path: str | None) -> None:
        if not path:
            return
        file = Path(path).expanduser()
        try:
            text = file.read_text()
        except OSError as exc:
            self.notify(f"cannot read {file}: {exc.strerror}", severity="error")
            return
        self.loaded_from, self.loaded_text = str(file), text
        if file.suffix in {".yaml", ".yml", ".json"} or text.lstrip().startswith(
            ("apiVersion", "---", "kind")
        ):
            self._load_manifest(file, text)
        else:
            self._load_sbatch(file)
        self.query_one("#submit-source", Static).update(
            user_text(f"from {file} · ctrl+r: back to the form")
        )
        self.query_one("#submit-form").set_class(True, "-disabled")

    def _load_manifest(self, file: Path, text: str) -> None:
        try:
            reports = check_text(text, str(file))
        except GryviaError as exc:
            self.jobs, self.findings = [], [("error", exc.message)]
            self.runtime = None
            self._show(text)
            return
        self.runtime = None
        self.jobs = [
            r.document.content
            for r in reports
            if not r.skipped
            and isinstance(r.document.content, dict)
            and r.document.content.get("kind") == "GryviaAIJob"
        ]
        self.findings = [("error", f.render()) for r in reports for f in r.errors]
        self.findings += [("warn", f.render()) for r in reports for f in r.warnings]
        self.findings += [
            ("info", f"{r.document.label}: skipped, {r.skipped}") for r in reports if r.skipped
        ]
        if not self.jobs:
            self.findings.append(("error", "no GryviaAIJob in this file"))
        self._show(text)

    def _load_sbatch(self, file: Path) -> None:
        image = self.query_one("#f-image", Input).value.strip() or None
        ns = self.query_one("#f-namespace", Input).value.strip() or None
        conversion = convert_file(file, image=image, namespace=ns)
        self.jobs = list(conversion.jobs)
        self.runtime = conversion.runtime
        self.findings = []
        for line in render_text(conversion.report):
            kind = "error" if line.startswith("✗") else "warn" if line.startswith("⚠") else "info"
            self.findings.append((kind, line.lstrip("✗⚠✓\u2139 ")))
        if not conversion.ok and not any(k == "error" for k, _ in self.findings):
            self.findings.append(("error", "the script does not import"))
        if not conversion.ok and image is None:
            self.findings.append(
                ("info", "set Image in the form (it plays --image), then open the file again")
            )
        self._show(yaml.safe_dump_all(self.jobs, sort_keys=False) if self.jobs else "")

    def action_leave_form(self) -> None:
        """Focus the preview so that single-key bindings reach the app."""
        self.set_focus(self.query_one("#submit-preview"))

    def action_reset(self) -> None:
        """Back to an empty form (after a file too), the focus on its first field."""
        self.loaded_from, self.loaded_text = None, ""
        self.query_one("#submit-source", Static).update("")
        self.query_one("#submit-form").set_class(False, "-disabled")
        self._fill_defaults()
        self.set_focus(self.query_one("#f-name", Input))
        self._preview()

    # -- submit ----------------------------------------------------------------------------

    def action_create(self) -> None:
        """Create the jobs of the preview if they are valid."""
        if self.console.readonly:
            return
        if not self.jobs or any(kind == "error" for kind, _ in self.findings):
            self.notify("Fix the errors first (see the list on the right).", severity="warning")
            return
        runtime = dict(self.runtime) if self.runtime else None
        jobs = [dict(j) for j in self.jobs]
        keys = [job_key(j, self.console.target.namespace) for j in jobs]
        self.confirm_jobs("create", keys, lambda: self._submit(jobs, runtime))

    @work(thread=True, exclusive=True, group="submit")
    def _submit(self, jobs: list[dict[str, Any]], runtime: dict[str, Any] | None = None) -> None:
        """Create the jobs, after the runtime ConfigMap of an imported script (thread worker)."""
        done: list[str] = []
        failed: list[tuple[str, str]] = []
        ref = None
        if runtime is not None:
            try:
                ref = self.source.create_config_map(runtime)
            except GryviaError as exc:
                self.post_message(JobsSubmitted([], [("runtime", exc.message)]))
                return
        for job in jobs:
            name = (job.get("metadata") or {}).get("name") or "job"
            try:
                done.append(self.source.create_job(job))
            except GryviaError as exc:
                failed.append((name, exc.message))
        if ref is not None and done:
            try:
                self.source.own_config_map(ref, done)
            except GryviaError as exc:
                failed.append(("runtime", exc.message))
        self.post_message(JobsSubmitted(done, failed))

    def on_jobs_submitted(self, message: JobsSubmitted) -> None:
        """Open the new job when one was created."""
        if len(message.done) == 1 and not message.failed:
            self.console.action_view("jobs")
            self.console.open_job(message.done[0], "overview")
