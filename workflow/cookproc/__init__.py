"""cookproc: the library behind the workflow (all logic lives here; scripts stay thin)."""
