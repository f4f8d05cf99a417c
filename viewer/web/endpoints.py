"""Which endpoints are live feeds: declared once, for the access log and for "as of event N" links."""

from __future__ import annotations

# Requested every second by every open page (or read by scripts as a feed): kept out of the access log.
LIVE_ENDPOINTS = frozenset({"pages.poll_sessions", "pages.poll_tree", "pages.poll_agent", "pages.poll_dialog",
                            "api.events", "search.poll", "usage.poll"})

# A frozen moment has no live feed, and the list of sessions is not one session's: links to these never
# carry ?at=. Every other link on a page frozen at N stays at N.
NO_AT_ENDPOINTS = LIVE_ENDPOINTS | {"static", "pages.index", "api.sessions", "usage.usage", "usage.usage_json"}
