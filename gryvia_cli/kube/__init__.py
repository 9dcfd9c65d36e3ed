"""Kubernetes access for the CLI and TUI: kubeconfig loading, API calls, watches."""
