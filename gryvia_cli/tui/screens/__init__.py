"""The console's screens: one per view, plus the Job view, dialogs and help."""
