"""Pure parts of sort-by-column, column toggles and console.yaml (no app, no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gryvia_cli.core.cost import TeamScope
from gryvia_cli.tui.drill import pods_on_node, team_jobs
from gryvia_cli.tui.sorting import SortState, cycle, ordered, press
from gryvia_cli.tui.usercommands import table_columns
from gryvia_cli.tui.userconfig import (
    ConsoleConfig,
    command_problem,
    console_config_path,
    load_console_config,
    save_hidden,
)
from gryvia_operator.api import GryviaUsageRecord
from tests.tui.builders import NOW
from tests.tui.fixed import fixed_cluster


def test_press_sorts_ascending_then_reverses_and_a_new_column_starts_ascending() -> None:
    state = SortState("age")
    assert press(state, "name") == SortState("name")
    assert press(press(state, "name"), "name") == SortState("name", reverse=True)
    assert press(SortState("name", reverse=True), "name") == SortState("name")
    assert SortState("cost", True).label == "cost↓" and SortState("cost").arrow == "↑"


def test_cycle_moves_to_the_next_visible_column_and_keeps_the_direction() -> None:
    assert cycle(SortState("age", True), ["name", "age", "cost"]) == SortState("cost", True)
    assert cycle(SortState("cost"), ["name", "age", "cost"]) == SortState("name")
    assert cycle(SortState("hidden"), ["name", "age"]) == SortState("name")
    assert cycle(SortState("age"), []) == SortState("age")


def test_ordered_puts_none_last_breaks_ties_by_key_and_reverses() -> None:
    values = {"b": 2, "a": 2, "c": None, "d": 1}
    assert ordered(list(values), values.get, SortState("x")) == ["d", "a", "b", "c"]
    assert ordered(list(values), values.get, SortState("x", True)) == ["c", "b", "a", "d"]


def test_a_good_file_loads_and_expands_aliases(tmp_path: Path) -> None:
    path = tmp_path / "console.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "aliases": {
                    "failed": "jobs phase:failed",
                    "gpu": "nodes",
                    "money": "budgets vision",
                    "acme": "describe tenant acme",
                },
                "hotkeys": {"f5": "queue", "ctrl+g": {"command": "failed", "description": "F"}},
                "columns": {"jobs": {"hidden": ["tenant"]}},
            }
        )
    )
    loaded = load_console_config(path, table_columns)
    assert loaded.problems == [] and loaded.saves
    config = loaded.config
    assert config.expand("failed") == "jobs phase:failed"
    assert config.expand(":failed gpu:H100") == "jobs phase:failed gpu:H100"
    assert config.expand("queue") == "queue"
    assert config.hotkeys["f5"].command == "queue"
    assert config.hidden("jobs") == {"tenant"} and config.hidden("nodes") == frozenset()


@pytest.mark.parametrize(
    ("data", "field", "fix"),
    [
        ({"aliases": {"jobs": "queue"}}, "aliases", "pick another name"),
        ({"aliases": {"Bad Name": "queue"}}, "aliases", "lower-case letters"),
        ({"aliases": {"x": "nowhere"}}, "aliases", "use one of jobs, queue"),
        ({"aliases": {"x": "capacity gpu:H100"}}, "aliases", "write just `capacity`"),
        ({"aliases": {"x": "describe pod"}}, "aliases", "describe KIND NAME"),
        ({"aliases": {"x": "describe gizmo a"}}, "aliases", "no kind the console describes"),
        ({"hotkeys": {"c": "jobs"}}, "hotkeys", "use f1-f24"),
        ({"hotkeys": {"ctrl+x": "jobs"}}, "hotkeys", "taken by app.switch_context"),
        ({"hotkeys": {"ctrl+p": "jobs"}}, "hotkeys", "the command palette"),
        ({"hotkeys": {"f5": {"command": "jobs", "colour": 1}}}, "hotkeys.f5.colour", "unknown"),
        ({"columns": {"jobz": {"hidden": []}}}, "columns", "tables: jobs, queue"),
        ({"columns": {"jobs": {"hidden": ["nope"]}}}, "columns", "columns: name, user, namespace"),
        ({"colums": {}}, "colums", "takes aliases, hotkeys and columns"),
    ],
)
def test_a_bad_file_names_the_field_and_the_fix_and_falls_back(
    tmp_path: Path, data: dict[str, object], field: str, fix: str
) -> None:
    path = tmp_path / "console.yaml"
    path.write_text(yaml.safe_dump(data))
    loaded = load_console_config(path, table_columns)
    assert loaded.config == ConsoleConfig() and not loaded.saves
    assert len(loaded.problems) == 1, loaded.problems
    assert loaded.problems[0].startswith(f"{path}: {field}: ") and fix in loaded.problems[0]


@pytest.mark.parametrize("text", ["aliases: [unclosed", "- just\n- a list\n", "\tnot: yaml"])
def test_a_file_that_is_not_a_mapping_never_raises(tmp_path: Path, text: str) -> None:
    path = tmp_path / "console.yaml"
    path.write_text(text)
    loaded = load_console_config(path, table_columns)
    assert loaded.config == ConsoleConfig() and loaded.problems and not loaded.saves


def test_a_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    loaded = load_console_config(tmp_path / "console.yaml", table_columns)
    assert loaded.config == ConsoleConfig() and loaded.problems == [] and loaded.saves
    assert not load_console_config(None, table_columns).saves


def test_save_hidden_keeps_the_other_keys_and_drops_empty_choices(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "console.yaml"
    loaded = load_console_config(path, table_columns)
    save_hidden(loaded, "jobs", ["type", "tenant"])
    assert yaml.safe_load(path.read_text()) == {"columns": {"jobs": {"hidden": ["tenant", "type"]}}}
    path.write_text(yaml.safe_dump({"aliases": {"f": "jobs phase:failed"}, "columns": {}}))
    loaded = load_console_config(path, table_columns)
    save_hidden(loaded, "nodes", ["driver"])
    save_hidden(loaded, "nodes", [])
    assert yaml.safe_load(path.read_text()) == {"aliases": {"f": "jobs phase:failed"}}
    assert load_console_config(path, table_columns).config.hidden("nodes") == frozenset()


def test_the_file_lives_next_to_the_cli_config_and_follows_xdg(tmp_path: Path) -> None:
    assert console_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "gryvia" / "console.yaml"
    )
    assert console_config_path({"GRYVIA_CONFIG_HOME": str(tmp_path)}) == tmp_path / "console.yaml"


def test_command_problem_accepts_views_filters_commands_and_aliases() -> None:
    assert command_problem("jobs phase:failed") is None
    assert command_problem("cap") is None
    assert command_problem("ctx") is None
    assert command_problem("mine", {"mine": "jobs"}) is None
    assert command_problem("") is not None


def test_pods_on_a_node_carry_their_job() -> None:
    rows = pods_on_node(fixed_cluster()["pods"], "gpu-h100-1")
    assert [(p.name, p.job, p.gpus) for p in rows] == [("llama-pretrain-1", "llama-pretrain", 8)]
    assert rows[0].job_key == "tenant-acme/llama-pretrain"
    assert pods_on_node(fixed_cluster()["pods"], "cpu-0") == []


def test_the_jobs_behind_a_team_add_up_to_its_spend() -> None:
    from gryvia_cli.core.cost import team_costs

    records = [GryviaUsageRecord.model_validate(r) for r in fixed_cluster()["usage"]]
    scope = TeamScope("acme", ("tenant-acme",), None, tenant=True)
    jobs = team_jobs(scope, records, NOW)
    assert {j.tenant for j in jobs} == {"acme"}
    assert jobs == sorted(jobs, key=lambda j: -j.cost)
    (cost,) = team_costs([scope], records, "month", NOW)
    assert sum(j.cost for j in jobs) == pytest.approx(cost.spent)
    assert len(jobs) == cost.jobs
