"""The sandbox picks every control-plane port itself (gryvia_cli/sandbox/ports.py): kwokctl's
own pick counts down from 32766 in every process alike, so two sandboxes started at once
collided and the second waited out kwokctl's timeout."""

from __future__ import annotations

from pathlib import Path

import yaml

from gryvia_cli.sandbox.kwokctl import kwokctl_config
from gryvia_cli.sandbox.ports import COMPONENT_PORTS, component_ports, free_port, port_taken


def test_each_component_gets_its_own_free_port_and_the_config_names_them(tmp_path: Path) -> None:
    ports = component_ports(None)
    assert set(ports) == set(COMPONENT_PORTS)
    assert len(set(ports.values())) == len(ports)
    assert not any(port_taken(p) for p in ports.values())
    options = next(yaml.safe_load_all(kwokctl_config(tmp_path, ports)))["options"]
    assert {k: options[k] for k in COMPONENT_PORTS} == ports
    # a second start picks other ports (kwokctl's own pick is the same in every process)
    assert component_ports(None) != ports


def test_a_given_api_port_is_kept_and_not_reused_for_another_component() -> None:
    given = free_port()
    ports = component_ports(given)
    assert ports["kubeApiserverPort"] == given
    assert list(ports.values()).count(given) == 1
