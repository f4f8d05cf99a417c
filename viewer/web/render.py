"""How a view answers: one data object, rendered as its page (HTML) or returned as its JSON twin.

As Datasette's views do: a page and its twin share the code that builds the data; only the last step
differs. A twin's URL is under /api/; its body is the data, the session id and the page's URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import quote, quote_plus

from flask import Response, current_app, g, render_template, request

from viewer.core import jsonio, times
from viewer.core.redact import shown_json

from . import shape_check
from .url_cache import url_for

CHECK_ENV = "AGENTVIEW_CHECK_SHAPES"  # set (to anything but 0) to check every answer built, as tests do


def built(shape, data: dict) -> dict:
    """`data`, a view's answer, checked against its declared `shape` (shapes.py, by shape_check's rule) in debug and
    test runs; a served answer is not checked (nor shape_check reached)."""
    if current_app.debug or os.environ.get(CHECK_ENV, "0") != "0":
        shape_check.conforms(shape, data, shape.__name__)
    return data


def as_json(data: dict, status: int = 200) -> Response:
    return Response(shown_json(jsonio.answer(data)), status=status, mimetype="application/json")


def twin(s, data: dict, page: str, **url_args) -> dict:
    """The JSON twin of a session's page: the page's data, the session id and the page's URL."""
    return {"id": s.id, **data, "url": url_for(page, session_id=s.id, **url_args)}


def wants_json() -> bool:
    """Whether this request asks for a JSON twin (every twin's URL is under /api/)."""
    return request.path.startswith("/api/")


def answer(data: dict, template: str, page: dict | None) -> Response | str:
    """A view's last step: its `data` as JSON, or its page: `template` rendered with `page` (its context)."""
    return as_json(data) if page is None else render_template(template, **page)


def page_or_twin(s, data: dict, shape: type, *, template: str, name: str, page: str, url_args: dict | None = None,
                 context: dict | None = None) -> Response | str:
    """`data` as the page `template` shows it (as `name`, beside the session's row and `context`), or as its
    JSON twin (of that `shape`) when the request is for one (`page` and `url_args` give the page's URL)."""
    answered = built(shape, twin(s, data, page, **(url_args or {})))
    return answer(answered, template, None if wants_json() else
                  dict(session=session_row(s), **{name: data}, **(context or {})))


def session_rows(library, sessions) -> list[dict]:
    """`session_row` of each of `library`'s `sessions`, their URLs made from one url_for (a folder of thousands is
    listed often), kept between requests by the app and made again only for the sessions that changed (Rows).
    Shared rows: copy one to add to it."""
    url_of = urls_of("pages.session", "session_id", "default")
    return current_app.extensions.setdefault(ROWS, Rows()).rows(library, sessions, url_of)


def session_row(s, url_of: Callable[[str], str] | None = None) -> dict:
    return row_of(key_of(s), url_for("pages.session", session_id=s.id) if url_of is None else url_of(s.id))


ROWS = "agentview.rows"  # app.extensions[ROWS]: the app's Rows


def key_of(s) -> tuple:
    """Every value the row of `s` shows (read without waking a sleeping session: see sleeping.LISTED)."""
    with s.lock:
        members = s.members
        return (s.id, s.name, s.relpath, s.shown_count, s.agent_count, s.problem_count, s.failure_count,
                s.updated_at, s.format, s.format_reason, s.project,
                tuple([m["rel"] for m in members.values()]) if members else None, s.title, s.first_time, s.last_time)


def row_of(key: tuple, url: str) -> dict:
    """The row a key shows, with the session's page at `url`."""
    (session_id, name, relpath, shown, agents, problems, failures, updated_at, fmt, reason, project, files, title,
     first_time, last_time) = key
    return {
        "id": session_id,
        "name": name,
        "path": relpath,
        "events": shown,  # what users see, not internal events
        "agents": agents,
        "problems": problems,
        "failures": failures,
        "updated_at": updated_at,
        "url": url,
        "format": fmt.name,
        "format_label": fmt.label,
        "format_reason": reason or None,
        "project": project,
        "files": list(files) if files is not None else None,
        "hides": sorted(fmt.hides),
        "title": title,
        "started_at": times.seconds(first_time),
        "active_at": times.seconds(last_time),
    }


class Rows:
    """The sessions list's rows last made, by session, with their keys (one per app: its URLs are its own). A row is
    made from its key alone (`key_of`: every value it shows, read under the session's lock), so a row kept under an
    equal key is the row that would be made now.

    A folder of 20,000 is listed at each poll, while its sessions are read: a sleeping session's key is not even read
    when nothing was told of it since its row was made (Library.bump) and it sleeps as it slept then (what it
    counts is fixed while it sleeps: sleeping.LISTED). So a change to what a sleeping session's row shows must be
    told, as the `/` page's 204 already needs. An awake session's key is read at each poll."""

    def __init__(self) -> None:
        self._kept: dict = {}  # session -> (its key, its row, what it slept with, the library's version then)
        self._urls: str | None = None  # the URLs the kept rows hold (url_of of an empty id): others, none kept

    def rows(self, library, sessions: list, url_of: Callable[[str], str]) -> list[dict]:
        """The row of each session, in order; those that changed are made again. A row is shared: not
        to be changed (copy it to add to it)."""
        version = library.version  # read first: a change while the rows are made is told after it
        urls = url_of("")
        kept = self._kept if urls == self._urls else {}
        since = library.rows_changed_at
        now: dict = {}
        out = []
        for s in sessions:
            found = kept.get(s)
            asleep = s.asleep
            if (found is None or asleep is None or found[2] is not asleep or since > found[3]
                    or s.changed_at > found[3]):
                key = key_of(s)
                found = (key, self._row(found, key, url_of), asleep, version)
            now[s] = found
            out.append(found[1])
        if len(now) >= len(kept):  # a whole listing: sessions gone from it are dropped
            self._kept, self._urls = now, urls
        else:
            kept.update(now)
        return out

    @staticmethod
    def _row(found: tuple | None, key: tuple, url_of: Callable[[str], str]) -> dict:
        """The row of `key`: the one kept (`found`) if made from an equal key, else made again, its URL kept while its
        id is (made by the same url_of)."""
        if found is None:
            return row_of(key, url_of(key[0]))
        if found[0] == key:
            return found[1]
        return row_of(key, found[1]["url"] if found[0][0] == key[0] else url_of(key[0]))


def folder_problems(library) -> list[dict]:
    """What keeps part of the folder from being listed (a folder that cannot be read, too deep...)."""
    return [p.as_dict() for p in library.problems]


SLOT = "~slot~"  # where an id goes in the one url_for (no session id holds "~": it is escaped ~7E)


def path_urls(endpoint: str, session_id: str, key: str) -> Callable[[str], str]:
    """The URL of `endpoint` in a session for any value of its <path:key> (see urls_of)."""
    return urls_of(endpoint, key, "path", session_id=session_id)


def urls_of(endpoint: str, key: str, converter: str, **values) -> Callable[[str], str]:
    """The URL of `endpoint` for any value of its `key` (a URL part of that converter), as url_for writes it (its
    ?at=N kept), from one url_for: a page with hundreds of links does not pay one url_for (about 10 us) for each."""
    head, tail = url_for(endpoint, **values, **{key: SLOT}).rsplit(SLOT, 1)
    url_map = current_app.url_map
    to_url = url_map.converters[converter](url_map).to_url  # the quoting url_for applies to that part
    return lambda value: head + to_url(value) + tail


QUERY_SAFE = "!$'()*,/:;?@"  # what url_for (werkzeug's urlencode) leaves unquoted in a query value


def query_urls(endpoint: str, key: str, **values) -> Callable[[str], str]:
    """The URL of `endpoint` for any value of its query argument `key`, as url_for writes it, from one url_for
    (see urls_of): a big session's tree links each agent's failures."""
    head, tail = url_for(endpoint, **values, **{key: SLOT}).rsplit(SLOT, 1)
    return lambda value: head + quote_plus(value, safe=QUERY_SAFE) + tail


def agent_urls(session_id: str) -> Callable[[str], str]:
    """The URL of each agent's page in a session (see path_urls)."""
    return path_urls("pages.agent", session_id, "agent_id")


_LINKS = {"pages.agent": "agent_id", "pages.message": "message_id"}


def link_url(endpoint: str, session_id: str, value: str, anchor: str | None = None) -> str:
    """url_for(endpoint, session_id=..., <its path key>=value, _anchor=anchor) for the links every entry has
    (its message, its agent), from one url_for per page (kept for the request in flask.g)."""
    return link_urls(endpoint, session_id)(value, anchor)


def link_urls(endpoint: str, session_id: str) -> Callable[..., str]:
    """link_url's links of one endpoint in one session, as a function of (value, anchor=None): a tree of hundreds
    of agents looks it up once."""
    made = g.setdefault("agentview_links", {})
    link = made.get((endpoint, session_id))
    if link is None:
        url_of = path_urls(endpoint, session_id, _LINKS[endpoint])
        quoted: dict[str, str] = {}  # by value: a tree's rows link their creators, hundreds of them the same agent

        def link(value: str, anchor: str | None = None) -> str:
            url = quoted.get(value) if type(value) is str else url_of(value)
            if url is None:
                url = quoted[value] = url_of(value)
            return url if anchor is None else f"{url}#{quote(anchor, safe=ANCHOR_SAFE)}"
        made[(endpoint, session_id)] = link
    return link


def message_urls(session_id: str, message_id: str) -> tuple[str, str]:
    """A message's page and its JSON twin, the id quoted once for both (every entry's menu links both)."""
    made = g.setdefault("agentview_message_urls", {})
    ends = made.get(session_id)
    if ends is None:
        page = url_for("pages.message", session_id=session_id, message_id=SLOT).rsplit(SLOT, 1)
        twin = url_for("api.message", session_id=session_id, message_id=SLOT).rsplit(SLOT, 1)
        url_map = current_app.url_map
        ends = made[session_id] = (page, twin, url_map.converters["path"](url_map).to_url)
    (page_head, page_tail), (twin_head, twin_tail), to_url = ends
    quoted = to_url(message_id)
    return page_head + quoted + page_tail, twin_head + quoted + twin_tail


ANCHOR_SAFE = "%!#$&'()*+,/:;=?@"  # what url_for leaves unquoted in an _anchor
