"""Filters of an agent's perspective (role, tool, modified deliveries), carried in the URL."""

from __future__ import annotations

from dataclasses import dataclass, field

from viewer.core import model
from viewer.search import index as search_index

# The choices the agent page offers, in its order, with their labels.
KINDS = {model.HEARD: "heard", model.DID: "did", model.SAID: "said", model.RECEIVED: "tool results",
         model.SYSTEM: "system", model.NOTED: "other"}


def tool_choices(s) -> list[str]:
    """Every tool name the session has called or answered: the tools the filter offers."""
    return sorted(s.tool_names)  # kept at ingest: the page does not wait for the search index


def is_on(value: str | None) -> bool:
    """Whether a query-string flag's value turns it on (`?sub=1`, `?modified=yes`...)."""
    return value in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class EntryFilter:
    kinds: tuple[str, ...] = ()
    tool: str = ""
    modified: bool = False
    # kinds asked for that are none of KINDS: the page says so beside its form; not part of what is filtered
    unknown: tuple[str, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.kinds or self.tool or self.modified)

    def passes(self, s, position: int) -> bool:
        """Whether the entry at `position` is shown (callers hold the session lock)."""
        event = s.events[position]
        if self.kinds and model.perspective_kind(event) not in self.kinds:
            return False
        if self.tool and model.tool_key(self.tool) not in search_index.tool_names(s, position):
            return False
        if self.modified and not (model.is_delivery(event)
                                  and model.is_modified(event, s.event(event["substance"])) is True):
            return False
        return True

    def args(self) -> dict:
        """URL parameters that give this filter back (None drops a parameter from url_for)."""
        return {"kind": ",".join(self.kinds) or None, "tool": self.tool or None,
                "modified": 1 if self.modified else None}

    @classmethod
    def from_args(cls, args) -> "EntryFilter":
        """`?kind=heard,said` (or repeated `kind=`), `?tool=read_file`, `?modified=1`."""
        kinds: list[str] = []
        unknown: list[str] = []
        for value in args.getlist("kind"):
            for k in value.split(","):
                if k in KINDS and k not in kinds:
                    kinds.append(k)
                elif k and k not in KINDS and k not in unknown:
                    unknown.append(k)
        modified = is_on(args.get("modified"))
        return cls(tuple(kinds), args.get("tool", "").strip(), modified, tuple(unknown))
