"""The console's widgets: they render what the screens give them and fetch nothing."""
