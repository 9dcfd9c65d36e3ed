"""`:describe KIND NAME` on the console's `:` line: which object the words name.

KIND is any word kubectl or gryvia uses for the kind: plural, singular, the CLI noun or the
short name (`gaj`, `po`, `gtn`, ...); NAME is `name` or `namespace/name`. Without a namespace
a namespaced kind is looked up in the console's namespace (`default` when it shows all).
"""

from __future__ import annotations

from collections.abc import Mapping

from gryvia_cli.tui.kindnames import CONSOLE_KINDS, NAMESPACED, ObjectKind, kind_words
from gryvia_cli.tui.registry import ObjectRef

__all__ = ["KIND_OF_WORD", "NAMESPACED", "USAGE", "describe_ref"]

KIND_OF_WORD: Mapping[str, ObjectKind] = {
    word: row.name for row in CONSOLE_KINDS for word in kind_words(row)
}
"""Every word `:describe` takes for a kind, to that kind."""

USAGE = "describe KIND NAME (or KIND NAMESPACE/NAME), e.g. describe pod tenant-nlp/llama-ddp-0"


def describe_ref(argument: str, namespace: str | None) -> ObjectRef | str:
    """The object `:describe` + `argument` names, or why it names none (a message for the user).

    `namespace`: the console's namespace (None when it shows all namespaces).
    """
    words = argument.split()
    if len(words) != 2:
        return f"write {USAGE}"
    kind = KIND_OF_WORD.get(words[0].lower())
    if kind is None:
        return f"“{words[0]}” is no kind the console describes; write {USAGE}"
    where, _, name = words[1].rpartition("/")
    if not name:
        return f"write {USAGE}"
    if kind not in NAMESPACED:
        if where:
            return f"{kind} are cluster-scoped: write describe {words[0]} {name}"
        return ObjectRef(kind, None, name)
    return ObjectRef(kind, where or namespace or "default", name)
