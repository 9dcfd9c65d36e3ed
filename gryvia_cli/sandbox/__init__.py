"""The local sandbox cluster: control-plane binaries, kwokctl driver, simulated GPU nodes, pod runner."""
