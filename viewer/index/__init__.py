"""One session's events indexed in memory: the agent tree, links, facets, usage, ids."""
