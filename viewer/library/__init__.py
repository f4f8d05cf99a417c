"""Every session below a folder, kept in step with its files: reading, grouping, watching, background work."""
