"""Option values that need no Pydantic: Typer (>= 0.2x) converts every parameter value through
a Pydantic TypeAdapter, built on first use even for an option left unset, and importing
Pydantic and building the adapters costs about 0.1 s of CPU per command.

`light_coercion(command)` gives each parameter of a command (and of its subcommands) a
runtime converter that answers the trivial cases itself, exactly as Typer's adapters would:
an unset value (None, or () for a multiple option), a string for a `str` parameter, and a
string that is exactly the value of a member for an Enum parameter (`-o json`), and a string
for a `Path` parameter (`--kubeconfig FILE`: made a Path here, then checked by Typer's
`coerce_cli_path` as its adapter would, without the adapter), and a string for a parameter
with its own `parser=` (every `-o`: the parser's value, as Typer's adapter returns it). Everything
else (numbers, paths, case-folded choices) goes to Typer's own converter, built then, so its
conversions stay Typer's; a choice that is no member's value in any case is refused here, in
Typer's words without the "Value error," that its Pydantic adapter puts before them. With a
Typer that converts otherwise (no `_runtime_param`), this does nothing.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any


def light_coercion(command: Any, ctx: Any, *, recurse: bool = True) -> None:
    """Install the light converter on every parameter of `command` (its help option too, as
    `ctx` names it) and, with `recurse`, of its loaded subcommands."""
    try:
        from typer._click.exceptions import BadParameter
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_path, routes_to_path
    except ImportError:  # another Typer: nothing to speed up
        return

    class LightRuntimeParam(RuntimeParam):
        """Trivial values here, the rest through Typer's converter (built on first need)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            annotation, info = self.annotation, self.parameter_info
            if info.parser is not None and isinstance(value, str):
                return info.parser(value)  # the option's own parser (`-o jsonpath=T`), as Typer
            if info.parser is None and isinstance(value, str):
                if annotation is str and not routes_to_path(annotation, info):
                    return value
                if (
                    isinstance(annotation, type)
                    and issubclass(annotation, Enum)
                    and getattr(ctx, "token_normalize_func", None) is None
                ):
                    for member in annotation:
                        if member.value == value:
                            return member
                    choices = [str(m.value) for m in annotation]
                    if value.casefold() not in {c.casefold() for c in choices}:
                        # Typer's adapter says "Value error, ..." (pydantic's wording)
                        listed = ", ".join(repr(c) for c in choices)
                        raise BadParameter(
                            f"{value!r} is not one of {listed}.", ctx=ctx, param=param
                        )
                path_type = _path_type(annotation, info)
                if path_type is not None and routes_to_path(annotation, info):
                    # Typer's own path checks and messages; only str -> Path is done here
                    return coerce_cli_path(
                        path_type(value), info, path_type=path_type, param=param, ctx=ctx
                    )
            real = build_runtime_param(param.type_descriptor)
            param._runtime_param = real  # later values skip this class
            return real._coerce_value(value, param=param, ctx=ctx)

    def install(cmd: Any) -> None:
        helper = getattr(cmd, "get_help_option", None)
        extra = [helper(ctx)] if callable(helper) else []
        for param in [*getattr(cmd, "params", ()), *extra]:
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is None or getattr(param, "_runtime_param", "absent") is not None:
                continue
            if descriptor.file_annotation is not None:
                continue
            param._runtime_param = LightRuntimeParam(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
        for sub in (getattr(cmd, "commands", None) or {}).values() if recurse else ():
            install(sub)

    install(command)


def _path_type(annotation: Any, info: Any) -> type[Path] | None:
    """The Path class Typer's path adapter converts a value of `annotation` to, or None."""
    candidate = getattr(info, "path_type", None) or annotation
    if isinstance(candidate, type) and issubclass(candidate, Path):
        return candidate
    return None
