"""`python -m gryvia_operator.exporter`: serve a machine's NVIDIA GPUs, read through NVML, in
dcgm-exporter's format on /metrics.

Exit codes: 0 after SIGTERM or Ctrl-C, 2 for bad arguments, 1 when NVML cannot start (no
nvidia-ml-py, no driver, no GPU).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from gryvia_operator.exporter.serve import parse_address, serve


def main(argv: list[str] | None = None) -> int:
    """Parse `argv`, open NVML and serve until stopped; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m gryvia_operator.exporter",
        description="Serve NVIDIA GPU metrics (NVML) in dcgm-exporter's format on /metrics.",
    )
    parser.add_argument(
        "--address",
        default=":9400",
        help="HOST:PORT to listen on; dcgm-exporter's default is :9400",
    )
    parser.add_argument(
        "--hostname",
        default=os.environ.get("NODE_NAME") or socket.gethostname(),
        help="the Hostname label (default: $NODE_NAME, else this machine's name)",
    )
    args = parser.parse_args(argv)
    try:
        host, port = parse_address(args.address)
    except ValueError as exc:
        parser.error(str(exc))
    from gryvia_operator.exporter.nvml import NvmlSource

    try:
        source = NvmlSource(args.hostname)
    except RuntimeError as exc:
        print(f"exporter: cannot read the GPUs: {exc}", file=sys.stderr)
        return 1
    serve(source, host, port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
