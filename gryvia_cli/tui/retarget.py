"""Switching the console to another kubeconfig context or namespace: the pickers, the
switch on a worker thread, and the feed started anew over the new source. A mixin of
`GryviaApp`."""

from __future__ import annotations

from textual import work

from gryvia_cli.errors import GryviaError
from gryvia_cli.tui.livefeed import LiveFeed
from gryvia_cli.tui.messages import ClusterChanged
from gryvia_cli.tui.screens.dialogs import PickerDialog
from gryvia_cli.tui.source import ClusterSource, Target


class Retargeting(LiveFeed):
    """`ctx` and `ns`: pick or name a context or namespace; the views empty and fill again
    from the new target's watches."""

    target: Target

    def action_switch_context(self) -> None:
        """Pick another kubeconfig context."""
        dialog = PickerDialog("Context", self.target.context, self.source.contexts)
        self.push_screen(dialog, self._context_chosen)

    def _context_chosen(self, name: str | None) -> None:
        if name and name != self.target.context:
            self._switch_context(name)

    @work(thread=True, exclusive=True, group="retarget")
    def _switch_context(self, context: str) -> None:
        try:
            source = self.source.switch_context(context)
        except GryviaError as exc:
            self.call_from_thread(self.notify, exc.message, title="Cannot switch", severity="error")
            return
        self.call_from_thread(self._use_source, source)

    def action_switch_namespace(self) -> None:
        """Pick a namespace, or all namespaces."""
        names = self.source.namespaces
        dialog = PickerDialog("Namespace", self.target.namespace_label, lambda: ["all", *names()])
        self.push_screen(dialog, self._namespace_chosen)

    def _namespace_chosen(self, name: str | None) -> None:
        if name:
            self._retarget(self.target.context, None if name == "all" else name)

    @work(thread=True, exclusive=True, group="retarget")
    def _retarget(self, context: str, namespace: str | None) -> None:
        try:
            source = self.source.retarget(context=context, namespace=namespace)
        except GryviaError as exc:
            self.call_from_thread(self.notify, exc.message, title="Cannot switch", severity="error")
            return
        self.call_from_thread(self._use_source, source)
        if namespace is not None and not self._namespace_exists(namespace):
            self.call_from_thread(
                self.notify,
                f"namespace {namespace} does not exist: its views stay empty until it is created",
                title="No such namespace",
                severity="warning",
            )

    def _namespace_exists(self, name: str) -> bool:
        """False only when the namespaces can be listed and `name` is not among them."""
        try:
            return name in self.source.namespaces()
        except GryviaError:
            return True  # may not list namespaces: nothing to say

    def _use_source(self, source: ClusterSource) -> None:
        if self.feed is not None:
            self.feed.stop()
        self.store.clear()
        self.source = source
        self.target = source.target
        self.connection = "connecting"
        self._start_feed()
        self.screen.post_message(ClusterChanged(None))
