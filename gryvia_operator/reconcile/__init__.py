"""Pure reconcile functions: observed objects in, desired children and status out."""
