"""Kubernetes access for the CLI and TUI: kubeconfig, API calls, errors, resource paths.

Modules: `config` (kubeconfig loading), `access` (the API calls), `errors` (translation into
GryviaError), `resources` (where each kind lives). Nothing here imports the `kubernetes` client
at module level; `access.connect()` does.
"""
