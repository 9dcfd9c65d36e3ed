"""`python -m gryvia_cli` runs the gryvia CLI."""

from gryvia_cli.main import main

main()
