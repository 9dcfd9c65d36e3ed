"""Pure computations the CLI and the TUI share: phases, ages, jobs, nodes, capacity, queue.

Modules here take API objects as plain dicts (as the API server sends them) plus an injected
`now`, and return dataclasses or rows. They import no kubernetes, typer, textual or kopf, and
read no clock, file or environment.
"""
