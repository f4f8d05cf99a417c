"""Full-text search: one session's index, the worker processes that build it, and the query language over it."""
