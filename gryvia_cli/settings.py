"""The CLI's one settings object: `GRYVIA_*` environment variables over a small YAML file.

The file is `$GRYVIA_CONFIG_HOME/config.yaml`, else `$XDG_CONFIG_HOME/gryvia/config.yaml`, else
`~/.config/gryvia/config.yaml`. It holds the default namespace per kubeconfig context
(`gryvia config set-namespace`). Loaded once at the edge (the root command) and passed down.
Read by plain code: importing pydantic-settings would cost a tenth of a second per command.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_FILE_NAME = "config.yaml"
ENV_PREFIX = "GRYVIA_"


def config_dir(environ: Any = None) -> Path:
    """The folder of Gryvia's config file (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    if env.get("GRYVIA_CONFIG_HOME"):
        return Path(env["GRYVIA_CONFIG_HOME"])
    xdg = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "gryvia"


def config_path(environ: Any = None) -> Path:
    """The config file path (it may not exist yet)."""
    return config_dir(environ) / CONFIG_FILE_NAME


@dataclass(frozen=True)
class GryviaSettings:
    """Settings from `GRYVIA_*` variables (highest), the config file, then defaults."""

    namespaces: dict[str, str] = field(default_factory=dict)
    """Default namespace per kubeconfig context name (written by `config set-namespace`)."""
    platform_namespace: str = "gryvia-system"
    """Namespace of the operator Deployment (`GRYVIA_PLATFORM_NAMESPACE`)."""
    request_timeout: float = 30.0
    """Seconds to wait for one API response (`GRYVIA_REQUEST_TIMEOUT`)."""
    sbatch_max_array_size: int = 100_001
    """The importer's MaxArraySize: array indices run 0..N-1 (`GRYVIA_SBATCH_MAX_ARRAY_SIZE`,
    at least 1; Slurm's own default is 1001)."""
    prometheus_url: str = ""
    """The Prometheus server that scrapes dcgm-exporter, for every context
    (`GRYVIA_PROMETHEUS_URL`); "" reads the exporters through the API server."""
    prometheus_urls: dict[str, str] = field(default_factory=dict)
    """The Prometheus server per kubeconfig context name (`gryvia config set-prometheus`,
    `gryvia sandbox up`); a context's own entry wins over `prometheus_url`."""

    def prometheus_for(self, context: str | None) -> str:
        """The Prometheus URL for kubeconfig context `context` ("" when none is set)."""
        return self.prometheus_urls.get(context or "", "") or self.prometheus_url


def _namespaces(value: Any) -> dict[str, str]:
    if isinstance(value, str):  # from the environment: JSON
        value = json.loads(value)
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError("expected a mapping of kubeconfig context names to namespaces")
    return dict(value)


def _url(value: Any) -> str:
    text = _text(value).strip()
    if text and not text.startswith(("http://", "https://")):
        raise ValueError(f"expected an http:// or https:// URL, not {text!r}")
    return text.rstrip("/")


def _urls(value: Any) -> dict[str, str]:
    return {context: _url(url) for context, url in _namespaces(value).items()}


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("expected a number of seconds")
    return float(value)


def _array_size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("expected a whole number")
    number = int(value)
    if number < 1:
        raise ValueError("expected a whole number of at least 1")
    return number


PARSERS: dict[str, Callable[[Any], Any]] = {
    "namespaces": _namespaces,
    "platform_namespace": _text,
    "request_timeout": _seconds,
    "sbatch_max_array_size": _array_size,
    "prometheus_url": _url,
    "prometheus_urls": _urls,
}
"""Each setting and how a value from the file or the environment becomes it."""


def load_settings(environ: Mapping[str, str] | None = None) -> GryviaSettings:
    """Read the settings now: `GRYVIA_<NAME>` variables (any case; `GRYVIA_NAMESPACES` is
    JSON) over the config file's keys over the defaults; unknown keys are ignored.

    Raises InvalidInputError naming the file, or the variable, and the setting when the
    file is not valid YAML or a value has the wrong type.
    """
    from gryvia_cli.errors import InvalidInputError

    env = os.environ if environ is None else environ
    path = config_path(env)
    values: dict[str, Any] = {}
    try:
        values.update(_file_values(path))
    except ValueError as exc:
        raise InvalidInputError(
            f"cannot read the gryvia config file {path}",
            hint="fix or delete the file; `gryvia config set-namespace` rewrites it",
            causes=(str(exc).splitlines()[0],),
        ) from exc
    from_env = {k.lower(): v for k, v in env.items() if k.upper().startswith(ENV_PREFIX)}
    settings: dict[str, Any] = {}
    for name, parse in PARSERS.items():
        key = (ENV_PREFIX + name).lower()
        source, value = (key.upper(), from_env[key]) if key in from_env else (None, None)
        if source is None:
            if name not in values:
                continue
            value = values[name]
        try:
            settings[name] = parse(value)
        except ValueError as exc:
            where = f"the variable {source}" if source else f"the gryvia config file {path}"
            raise InvalidInputError(
                f"cannot read {where}",
                hint="fix or delete the file; `gryvia config set-namespace` rewrites it"
                if source is None
                else f"unset {source} or give it a valid value",
                causes=(f"{name}: {str(exc).splitlines()[0]}",),
            ) from exc
    return GryviaSettings(**settings)


def _file_values(path: Path) -> dict[str, Any]:
    """The config file's mapping ({} when there is no file). Raises ValueError when it is
    not a YAML mapping."""
    if not path.is_file():
        return {}
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(path.read_text(), Loader=loader)
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(str(exc)) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("expected a mapping of settings at the top of the file")
    return data


def save_namespace(context: str, namespace: str | None) -> Path:
    """Store (or with None remove) the default namespace of `context` in the config file.

    Other keys in the file are kept. Returns the file's path; raises OSError on write errors.
    """
    return _save_per_context("namespaces", context, namespace)


def save_prometheus(context: str, url: str | None) -> Path:
    """Store (or with None remove) the Prometheus URL of `context` in the config file
    (`prometheus_urls`). Other keys are kept. Returns the file's path; raises ValueError for
    a URL that is not http(s) and OSError on write errors."""
    return _save_per_context("prometheus_urls", context, _url(url) if url else None)


def _save_per_context(key: str, context: str, value: str | None) -> Path:
    import yaml

    path = config_path()
    data: dict[str, Any] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text()) or {}
        data = loaded if isinstance(loaded, dict) else {}
    entries = dict(data.get(key) or {})
    if value:
        entries[context] = value
    else:
        entries.pop(context, None)
    data[key] = entries
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=True))
    return path
