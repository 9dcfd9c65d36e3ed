"""Builders shared by the sbatch importer tests: scripts from lines, conversions, lookups."""

from __future__ import annotations

from typing import Any

from gryvia_cli.sbatch.convert import Conversion, convert_script
from gryvia_cli.sbatch.model import Issue, ParsedScript
from gryvia_cli.sbatch.parser import parse_script


def make_script(*lines: str, shebang: str = "#!/bin/bash", body: str = "echo hi") -> bytes:
    """A batch script: the shebang, the given directive lines, then a body command."""
    return ("\n".join([shebang, *lines, body]) + "\n").encode()


def sbatch(*directives: str, body: str = "echo hi") -> bytes:
    """A script with one `#SBATCH` line per directive."""
    return make_script(*(f"#SBATCH {d}" for d in directives), body=body)


def parse(*directives: str) -> ParsedScript:
    """Parse a script made of these directive words."""
    return parse_script(sbatch(*directives), "job.sh")


def convert(data: bytes, name: str = "job.sh", **options: Any) -> Conversion:
    """Convert with an image unless the test says otherwise."""
    options.setdefault("image", "registry.example/train:1")
    return convert_script(data, name, **options)


def codes(issues: Any) -> list[str]:
    """The codes of a list of issues or report items."""
    return [item.code if isinstance(item, Issue) else item["code"] for item in issues]


def values(parsed: ParsedScript) -> dict[str, str | None]:
    """Option key -> last value."""
    return {d.key: d.value for d in parsed.directives}


def env_of(job: dict[str, Any], runtime: dict[str, Any] | None = None) -> dict[str, str]:
    """A manifest's plain env values, plus those read from the `runtime` ConfigMap."""
    env = {e["name"]: e["value"] for e in job["spec"]["env"] if "value" in e}
    for entry in job["spec"]["env"]:
        ref = (entry.get("valueFrom") or {}).get("configMapKeyRef")
        if ref and runtime is not None:
            assert ref["name"] == runtime["metadata"]["name"]
            env[entry["name"]] = runtime["data"][ref["key"]]
    return env
