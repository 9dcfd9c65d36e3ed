"""The CLI's one settings object: `GRYVIA_*` environment variables over a small YAML file.

The file is `$GRYVIA_CONFIG_HOME/config.yaml`, else `$XDG_CONFIG_HOME/gryvia/config.yaml`, else
`~/.config/gryvia/config.yaml`. It holds the default namespace per kubeconfig context
(`gryvia config set-namespace`). Loaded once at the edge (the root command) and passed down.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

CONFIG_FILE_NAME = "config.yaml"


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


class GryviaSettings(BaseSettings):
    """Settings from `GRYVIA_*` variables (highest), the config file, then defaults."""

    model_config = SettingsConfigDict(env_prefix="GRYVIA_", extra="ignore")

    namespaces: dict[str, str] = Field(default_factory=dict)
    """Default namespace per kubeconfig context name (written by `config set-namespace`)."""
    platform_namespace: str = "gryvia-system"
    """Namespace of the operator Deployment (`GRYVIA_PLATFORM_NAMESPACE`)."""
    request_timeout: float = 30.0
    """Seconds to wait for one API response (`GRYVIA_REQUEST_TIMEOUT`)."""
    sbatch_max_array_size: int = Field(default=100_001, ge=1)
    """The importer's MaxArraySize: array indices run 0..N-1 (`GRYVIA_SBATCH_MAX_ARRAY_SIZE`;
    Slurm's own default is 1001)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Order: constructor arguments, environment, the YAML file."""
        return (
            init_settings,
            env_settings,
            YamlConfigSettingsSource(settings_cls, yaml_file=config_path()),
        )


def load_settings() -> GryviaSettings:
    """Read the settings now (environment and config file).

    Raises GryviaError when the file is not valid YAML or has wrong types.
    """
    from pydantic import ValidationError

    from gryvia_cli.errors import InvalidInputError

    try:
        return GryviaSettings()
    except (ValidationError, ValueError) as exc:
        raise InvalidInputError(
            f"cannot read the gryvia config file {config_path()}",
            hint="fix or delete the file; `gryvia config set-namespace` rewrites it",
            causes=(str(exc).splitlines()[0],),
        ) from exc


def save_namespace(context: str, namespace: str | None) -> Path:
    """Store (or with None remove) the default namespace of `context` in the config file.

    Other keys in the file are kept. Returns the file's path; raises OSError on write errors.
    """
    import yaml

    path = config_path()
    data: dict[str, Any] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text()) or {}
        data = loaded if isinstance(loaded, dict) else {}
    namespaces = dict(data.get("namespaces") or {})
    if namespace:
        namespaces[context] = namespace
    else:
        namespaces.pop(context, None)
    data["namespaces"] = namespaces
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=True))
    return path
