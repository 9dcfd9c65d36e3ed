"""The in-pod Slurm runtime shipped inside imported jobs (stdlib only; see `shim.py`)."""
