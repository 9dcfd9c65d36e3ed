"""Pure computations shared by the CLI and the TUI: no kubernetes, Typer or Textual imports."""
