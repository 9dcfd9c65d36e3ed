"""Kubernetes access for the CLI and TUI: the only code of either that imports the `kubernetes`
client (an import-linter contract says so).

Modules: `config` (kubeconfig loading and merging, contexts), `execcred` (exec credential
plugins, cached per token lifetime), `proxy` (which proxy, as kubectl), `access` (the API
calls, one REST transport), `watch` (list-then-watch and log following over `access`), `errors`
(translation into GryviaError), `resources` (the CLI nouns of `gryvia_operator.api.resources`).
Nothing here imports the `kubernetes` client at module level; `connect.connect()` does.
"""
