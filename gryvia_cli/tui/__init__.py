"""The Textual console (`gryvia tui`)."""
