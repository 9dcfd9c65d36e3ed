"""`gryvia cancel JOB...`: ask the operator to stop jobs (annotation gryvia.io/cancel)."""

from __future__ import annotations

from typing import Annotated

import typer

from gryvia_cli.cli.each import Outcome, act_on_each
from gryvia_cli.cli.options import NamespaceOpt, YesOpt, check_job_name, confirm
from gryvia_cli.cli.session import session
from gryvia_cli.kube import resources as r
from gryvia_cli.output import warn

app = typer.Typer()


@app.command("cancel", rich_help_panel="Workloads")
def cancel(
    ctx: typer.Context,
    jobs: Annotated[
        list[str], typer.Argument(help="Job names (or job array names).", show_default=False)
    ],
    yes: YesOpt = False,
    namespace: NamespaceOpt = None,
) -> None:
    """Cancel waiting or running jobs.

    The operator stops their pods and marks them Cancelled.

    Sets the annotation gryvia.io/cancel="true"; the job object stays (its record and cost
    are kept) until `gryvia delete job`. A name no job has but a job array has (an imported
    `#SBATCH --array`, label gryvia.io/array-name) cancels every element, as scancel does.
    Asks first unless --yes or stdin is not a terminal.
    Jobs already ended are left alone. Exit 1 when any job could not be cancelled.

    Examples:
      gryvia cancel train-ddp
      gryvia cancel a b c --yes -n team-a
      gryvia cancel sweep
    """
    from gryvia_cli.views.cancel import request_cancel

    for job in jobs:
        check_job_name(job)
    from gryvia_cli.views.arrays import expand_names

    state = session(ctx)
    ns = state.resolve_namespace(namespace)
    access = state.access()
    jobs = expand_names(access, ns, jobs)
    if not confirm(f"Cancel {len(jobs)} job(s) in {ns}: {', '.join(jobs)}?", yes):
        raise typer.Exit(1)

    def cancel_one(name: str) -> Outcome:
        why_not = request_cancel(access, name, ns)
        if why_not is not None:
            warn(why_not)
            return None
        return f"job {name} cancel requested", f"{r.AIJOB.qualified}/{name}"

    act_on_each(
        jobs, cancel_one, label=lambda name: f"job {name}", what="job(s) could not be cancelled"
    )
