"""Session files read safely: opened only inside the folder, followed by offset, events read back where they lie."""
