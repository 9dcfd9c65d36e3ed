"""kubectl's JSONPath templates: the examples of kubectl's JSONPath reference page and outputs
of the kubectl v1.36.3 binary (`kubectl annotate --local -f OBJ q=r -o jsonpath=T`) for the
same documents, byte for byte."""

from __future__ import annotations

import pytest

from gryvia_cli.core.gotext import go_float, go_json, go_sprint
from gryvia_cli.core.jsonpath import JsonPathError, compile_template, relaxed_path

# The document of kubectl's JSONPath reference page.
DOCS = {
    "kind": "List",
    "items": [
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
            "status": {
                "capacity": {"cpu": "4"},
                "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}],
            },
        },
        {
            "kind": "None",
            "metadata": {"name": "127.0.0.2"},
            "status": {
                "capacity": {"cpu": "8"},
                "addresses": [
                    {"type": "LegacyHostIP", "address": "127.0.0.2"},
                    {"type": "another", "address": "127.0.0.3"},
                ],
            },
        },
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("{.kind}", "List"),
        ("{['kind']}", "List"),
        ("{..name}", "127.0.0.1 127.0.0.2 myself e2e"),
        ("{.items[*].metadata.name}", "127.0.0.1 127.0.0.2"),
        ("{.items[-1:].metadata.name}", "127.0.0.2"),
        (
            "{.items[*]['metadata.name', 'status.capacity']}",
            '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}',
        ),
        ('{.users[?(@.name=="e2e")].user.password}', "secret"),
        (
            "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
            '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ',
        ),
        ("{.items[0].metadata.labels.kubernetes\\.io/hostname}", "127.0.0.1"),
        (
            '{range .items[*]}{.metadata.name}{"\\t"}'
            '{.status.addresses[?(@.type=="LegacyHostIP")].address}{"\\n"}{end}',
            "127.0.0.1\t127.0.0.1\n127.0.0.2\t127.0.0.2\n",
        ),
    ],
)
def test_kubectl_reference_examples(template: str, text: str) -> None:
    assert compile_template(template).render(DOCS) == text


SPEC = {
    "f": 2.5,
    "big": 1234567.5,
    "tiny": 0.00001,
    "huge": 1e22,
    "i": 3,
    "t": True,
    "n": None,
    "arr": [1, "b", {"x": 1}],
    "labels": {"z": "1", "b": "x<y&"},
    "items": [
        {"name": "x", "gpus": 2, "type": "H100", "tags": ["p", "q"]},
        {"name": "y", "gpus": 1, "type": "A100", "extra": {"k": [1, 2]}},
        {"name": "z", "gpus": 4, "type": "H100", "f": 1.5},
    ],
}


@pytest.mark.parametrize(
    ("template", "text"),
    [
        (
            "{.f} {.big} {.tiny} {.huge} {.i} {.t} {.n}|",
            "2.5 1.2345675e+06 1e-05 1e+22 3 true null|",
        ),
        ("{.labels}", '{"b":"x\\u003cy\\u0026","z":"1"}'),
        ("{.arr[*]}", '1 b {"x":1}'),
        ("{.missing}|{.missing.deeper}|{.n.x}|", "|||"),
        ('x{"\\n"}y\\n{"\\t"}z{\'\\x41\\101\\u00e9\'}', "x\ny\\n\tzAAé"),
        ("{.items[0:3:2].name} {.items[:2].name} {.items[1:1]}|", "x z x y |"),
        (
            "{range .items[*]}[{.name}:{range .tags[*]}<{@}>{end}]{end}done",
            "[x:<p><q>][y:][z:]done",
        ),
        ("{range .nothing[*]}{.name}{end}after", "after"),
        ("{range .items[*]}{.name}", "xyz"),
        ("{.items[?(@.gpus>=2)].name} {.items[?(@.gpus!=2)].name}", "x z y z"),
        ("{.items[?(@.extra)].name} {.items[?(@.f==1.5)].name}", "y z"),
        ("{.items[?(@.tags[5])].name}", "x"),
        ("{.items[*]['name','gpus']}", "x y z 2 1 4"),
        ("{1} {1.5} {true} {-2}", "1 1.5 true -2"),
        ("{.}|{.a!}|", "||"),
    ],
)
def test_outputs_of_the_kubectl_binary(template: str, text: str) -> None:
    assert compile_template(template).render(SPEC) == text


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.items[5]}", "array index out of bounds: index 5, length 3"),
        ("{.items[-4]}", "array index out of bounds: index -1, length 3"),
        ("{.items[2:1]}", "starting index 2 is greater than ending index 1"),
        ("{.items[?(@.gpus==1.5)].name}", "incompatible types for comparison"),
        ("{.items[?(@.type==2)].name}", "incompatible types for comparison"),
        ("{.i[0]}", "int64 is not array or slice"),
        ("{end}", "not in range, nothing to end"),
        ("{foo}", "unrecognized identifier foo"),
    ],
)
def test_execution_errors_are_kubectls(template: str, message: str) -> None:
    with pytest.raises(JsonPathError, match=f"^{message}$".replace("[", r"\[").replace("?", r"\?")):
        compile_template(template).render(SPEC)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.a[}", "unterminated array"),
        ("{.a[x]}", "invalid array index x"),
        ("{.a[?(@.x==1)}", "unclosed array expect ]"),
        ('{"abc}', "unterminated quoted string"),
        ("{.a", "unclosed action"),
        ("{.a,.b}", "unrecognized character in action: U+002C ','"),
    ],
)
def test_parse_errors_are_kubectls(template: str, message: str) -> None:
    with pytest.raises(JsonPathError) as err:
        compile_template(template)
    assert str(err.value) == message


def test_relaxed_paths_of_custom_columns() -> None:
    for path in ("metadata.name", ".metadata.name", "{metadata.name}", "{.metadata.name}"):
        assert relaxed_path(path) == "{.metadata.name}"
    assert relaxed_path("") == ""
    with pytest.raises(JsonPathError, match="unexpected path string"):
        relaxed_path("{.a}{.b}")


def test_go_value_forms() -> None:
    assert [go_float(v) for v in (100.0, 0.0001, 1e-05, 123456.0, -0.5)] == [
        "100",
        "0.0001",
        "1e-05",
        "123456",
        "-0.5",
    ]
    assert go_json({"b": [1.5, 1e-07, 1e21, None], "a": "\u2028>"}) == (
        '{"a":"\\u2028\\u003e","b":[1.5,1e-7,1e+21,null]}'
    )
    assert (
        go_sprint({"b": [1, "x"], "a": None, "c": {"d": True}})
        == "map[a:<nil> b:[1 x] c:map[d:true]]"
    )
