"""A GPU metrics exporter in dcgm-exporter's format (`gryvia_operator.api.dcgm`).

`python -m gryvia_operator.exporter` reads a machine's NVIDIA GPUs through NVML
(nvidia-ml-py), for machines that have GPUs and no dcgm-exporter; `serve` is the HTTP side,
which the sandbox's simulated GPUs (`gryvia_cli.sandbox.gpusim`) use too. Standard library only,
besides nvidia-ml-py.
"""
