"""Thin kopf handlers: read, call reconcile, write."""
