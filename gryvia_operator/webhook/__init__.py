"""Validating admission webhook."""
