"""What pages read from an index: trees, perspectives, dialogs, provenance, pictures, costs, as-of."""
