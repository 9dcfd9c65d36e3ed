"""`#SBATCH --partition` as a Kueue LocalQueue (issue 19): spec.queueName when the queue exists
in the jobs' namespace, and the importer's message saying which happened. Pure."""

from __future__ import annotations

from collections.abc import Callable

from gryvia_cli.sbatch.model import ImportSettings, Issue, ParsedScript, warning


def partition_queue(
    parsed: ParsedScript, settings: ImportSettings, note: Callable[[str, str, str | None], None]
) -> tuple[str | None, list[Issue]]:
    """spec.queueName from `--partition=X` (a list keeps its first entry) and what to say.

    Issue 19: with Kueue (`settings.local_queues` read), X becomes spec.queueName only when a
    LocalQueue X exists in the jobs' namespace, so Kueue admits the job there; otherwise no
    queue is set (the namespace's default LocalQueue or Gryvia's own gate admits it) and the
    warning says so. Without Kueue (None) X is kept as spec.queueName, which places nothing.
    """
    partition = parsed.last("partition")
    if partition is None:
        note("partition", "spec.queueName", None)
        return None, []
    wanted = partition.value.split(",")[0] if partition.value else None
    where = f" in namespace {settings.queue_namespace}" if settings.queue_namespace else ""
    if settings.local_queues is None or wanted is None:
        note("partition", "spec.queueName", wanted)
        text = (
            f"{partition.show()}: kept as spec.queueName={wanted}, which does not affect "
            "placement (a partition list keeps its first entry); Gryvia places jobs by "
            "GPU type (--gres=gpu:TYPE:N or --constraint)"
        )
        return wanted, [warning("partition-as-queue", text, partition.line, partition.directive)]
    if wanted in settings.local_queues:
        note("partition", "spec.queueName", wanted)
        text = (
            f"{partition.show()}: sent to Kueue LocalQueue {wanted}{where} "
            f"(spec.queueName={wanted}); Kueue admits the job from that queue"
        )
        return wanted, [
            warning("partition-to-local-queue", text, partition.line, partition.directive)
        ]
    note("partition", "spec.queueName", None)
    have = ", ".join(sorted(settings.local_queues)) or "none"
    text = (
        f"{partition.show()}: no Kueue LocalQueue {wanted}{where} (LocalQueues: {have}); "
        "spec.queueName is left unset, so the namespace's default queue, or Gryvia's own "
        "quota gate, admits the job; the partition stays in SLURM_JOB_PARTITION"
    )
    return None, [warning("partition-no-local-queue", text, partition.line, partition.directive)]
