"""The local sandbox cluster: binaries, kwokctl driver, simulated GPU nodes, pod runner."""
