"""Slurm's view of Gryvia's nodes: the rows of `gryvia sinfo` (sinfo(1) NODE STATE CODES).

The GPU types are the partitions; one row per GPU type and node state: idle (no GPU held),
mix, alloc (all held), drain (cordoned), down (NotReady or missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from gryvia_cli.core.nodes import GpuNode
from gryvia_cli.core.slurmfmt import compress_hostlist

SINFO_FORMAT = "%9P %5a %.10l %.6D %.6t %N"
SINFO_HEADERS = {
    "P": "PARTITION", "a": "AVAIL", "l": "TIMELIMIT", "D": "NODES", "t": "STATE", "T": "STATE",
    "N": "NODELIST", "G": "GRES",
}  # fmt: skip


def node_state(node: GpuNode, held: int) -> str:
    """sinfo's state of a GPU node: down, drain, alloc, mix or idle."""
    if not node.node_exists or not node.node_ready:
        return "down"
    if not node.schedulable:
        return "drain"
    if node.gpus and held >= node.gpus:
        return "alloc"
    return "mix" if held > 0 else "idle"


def sinfo_rows(
    nodes: Iterable[GpuNode], allocated: Mapping[str, int], partitions: Sequence[str] | None = None
) -> list[dict[str, str]]:
    """One sinfo line per (GPU type, node state), partitions sorted, as sinfo groups them."""
    wanted = {p.strip().lower() for v in partitions or [] for p in v.split(",") if p.strip()}
    groups: dict[tuple[str, str], list[GpuNode]] = {}
    for node in nodes:
        if wanted and node.gpu_type.lower() not in wanted:
            continue
        state = node_state(node, allocated.get(node.slot, 0))
        groups.setdefault((node.gpu_type, state), []).append(node)
    rows = []
    for (partition, state), members in sorted(groups.items()):
        gres = sorted({f"gpu:{n.gpu_type}:{n.gpus}" for n in members})
        rows.append(
            {
                "P": partition, "a": "up", "l": "infinite", "D": str(len(members)),
                "t": state, "T": state, "N": compress_hostlist(n.name for n in members),
                "G": ",".join(gres),
            }
        )  # fmt: skip
    return rows
