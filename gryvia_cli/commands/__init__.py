"""Typer command groups, one module per group."""
