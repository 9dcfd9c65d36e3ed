"""Gryvia's cluster side: API types, reconcilers, kopf handlers and the admission webhook."""
