"""Logging in to an OIDC issuer: its HTTP client, the keyring store, the kubeconfig user."""
