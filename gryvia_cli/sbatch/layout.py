"""Tasks per node: how many tasks each pod of an imported job starts (Slurm's block layout).

Rules (sbatch(1) -n, -N, --ntasks-per-node; srun(1) -m block), each checked against Slurm
22.05 itself (tests/integration/test_slurm_oracle.py):

* `--ntasks-per-node=k` alone: k on every node.
* `-n n` on N nodes: the block layout, n // N each and one more on the first n % N nodes
  (`-N 2 -n 5` -> 3,2; `-N 4 -n 6` -> 2,2,1,1). It is the layout Slurm gives on nodes sized
  for the job (ceil(n/N) CPUs per task); on larger nodes Slurm 22.05's select/cons_tres
  packs the first node instead (4,1 on 128-CPU nodes), which a pod has no equivalent for:
  a pod is exactly as large as the job asks (examples/sbatch/README.md, the table of
  differences).
* `-n n` with `--ntasks-per-node=k` on N nodes: k is a maximum (sbatch(1)); the tasks are laid
  out as above (srun warns "can't honor --ntasks-per-node" and does the same); more than N x k
  tasks is refused, as sbatch refuses it ("Requested node configuration is not available").
"""

from __future__ import annotations

from gryvia_cli.sbatch.runtime.slurm_step import tasks_per_node_text as tasks_per_node_text


def block_layout(ntasks: int, nodes: int) -> tuple[int, ...]:
    """`ntasks` over `nodes` nodes, first nodes one more: (5, 2) -> (3, 2).

    Raises ValueError when either count is below 1."""
    if ntasks < 1 or nodes < 1:
        raise ValueError(f"cannot lay out {ntasks} task(s) on {nodes} node(s)")
    return tuple(ntasks // nodes + (slot < ntasks % nodes) for slot in range(nodes))


def task_layout(nodes: int, ntasks: int | None, per_node: int | None) -> tuple[int, ...]:
    """Tasks per node for `-N nodes`, `-n ntasks` and `--ntasks-per-node=per_node` (either of
    the last two may be None). `nodes` is already reduced to `ntasks` when fewer tasks than
    nodes were asked for (as Slurm does).

    Raises ValueError with sbatch's reason when `ntasks` exceeds `nodes x per_node`."""
    if ntasks is None:
        return (per_node or 1,) * nodes
    if per_node is not None and ntasks > nodes * per_node:
        raise ValueError(
            f"--ntasks={ntasks} is more than {nodes} node(s) x --ntasks-per-node={per_node}; "
            "sbatch refuses it (Requested node configuration is not available)"
        )
    return block_layout(ntasks, nodes)


def is_uneven(counts: tuple[int, ...]) -> bool:
    """True when the pods do not all start the same number of tasks."""
    return len(set(counts)) > 1
