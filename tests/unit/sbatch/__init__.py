"""Unit tests of the Slurm batch-script importer (gryvia_cli.sbatch)."""
