"""Manifests the integration tests create: `sh_job` lives in tests/builders.py with the one
job builder; it is re-exported here for the modules that still import it from here."""

from __future__ import annotations

from tests.builders import sh_job

__all__ = ["sh_job"]
