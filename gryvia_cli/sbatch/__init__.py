"""Slurm batch-script import: parser, mapping to GryviaAIJob, migration report, in-pod runtime.

Everything here is pure (no cluster access). Entry points:

* `convert_script(data, filename, image=..., namespace=..., submission_id=...)` and
  `convert_file(path, ...)` return a `Conversion` with `.ok`, `.jobs` (GryviaAIJob dicts,
  empty on any error) and `.report` (the migration report as JSON data);
* `render_text(report)` gives the report's human lines (for stderr);
* `plan_release(elements, max_parallel)` keeps a `%N` array throttle (see `arrays`).
"""

from gryvia_cli.sbatch.arrays import ArrayElement, element_from_job, plan_release
from gryvia_cli.sbatch.convert import Conversion, convert_file, convert_script
from gryvia_cli.sbatch.report import render_text, summarize

__all__ = [
    "ArrayElement",
    "Conversion",
    "convert_file",
    "convert_script",
    "element_from_job",
    "plan_release",
    "render_text",
    "summarize",
]
