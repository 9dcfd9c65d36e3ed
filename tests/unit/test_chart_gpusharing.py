"""The chart's opt-in GPU sharing (`gpuOperator.gpuSharing`, issue 18)."""

from __future__ import annotations

from tests.unit.test_chart import container, render


def test_gpu_sharing_is_off_by_default() -> None:
    assert not [a for a in container(render())["args"] if "sharing" in a or "device-plugin" in a]


def test_the_value_turns_sharing_on_with_the_configmap_location() -> None:
    args = container(
        render(
            "--set",
            "gpuOperator.gpuSharing.enabled=true",
            "--set",
            "gpuOperator.devicePluginConfig.namespace=nvidia",
        )
    )["args"]
    assert "--enable-gpu-sharing" in args
    assert "--device-plugin-config-namespace=nvidia" in args
    assert "--device-plugin-config-name=gryvia-device-plugin-config" in args
    assert "--simulate-device-plugin" not in args
