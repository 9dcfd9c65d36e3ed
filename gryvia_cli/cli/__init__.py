"""Typer plumbing every command shares: the root group, the session, option types, reports."""
