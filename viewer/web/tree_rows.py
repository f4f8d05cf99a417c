"""The session page's agent tree as HTML, written here: a row per agent, in reading order (queries.tree_rows), nested
by a flat loop (each row's `closes` ends the nodes it closes), and the badges a row shows (status, cost, failures),
which _macros.html's macros of those names call too. A big session's tree is hundreds of rows of a dozen printed
values each: template macros drawing them took most of its page. Every printed value goes through security.printed
(masked), then is escaped, as a template prints it.
"""

from __future__ import annotations

from flask import current_app
from markupsafe import Markup, escape

from viewer.core.redact import unmasked
from viewer.reads import costs, queries

from .render import link_urls, query_urls
from .security import printed_html
from .shell import colour_class
from .url_cache import url_for

MISSING = ('<span class="badge warn" title="its agent_created names a message that is not in the log">cause {}'
           ' missing</span>')
IMPLICIT = '<span class="badge" title="no agent_created event: known from its transcript only">implicit</span>'
INFERRED = ('<span class="badge inferred" title="the log does not name the parent: inferred from the task call before'
            ' its creation">inferred parent</span>')
UNLINKED = ('<span class="badge inferred unlinked" title="no call in the log names this sub-agent (yet): listed under'
            ' the main agent">unlinked sub-agent</span>')
CYCLE = '<span class="badge warn">cause cycle</span>'
CLOSE = "</ul>\n  </details>\n</li>"
IMPLICIT_LINE = "\n    " + IMPLICIT



def _number(value) -> str:
    """printed_html of a count or an ordinal the index made: an int prints as its digits (nothing to mask or escape)."""
    return str(value) if type(value) is int else printed_html(value)


def _printer(texts):
    """printed_html, keeping what it printed (a model's name, a status, a creator's id recur row after row) and printing
    those of `texts` that hold nothing to mask (redact.unmasked: one search for them all) by escaping them alone, all
    in one escape of them joined by NUL (which escaping leaves as it is): a tree's thousands of ids, names and URLs
    cost one call, not one each."""
    clean = unmasked(texts)
    joined = [text for text in clean if "\0" not in text]
    said = dict(zip([(str, text) for text in joined], str.split(escape("\0".join(joined)), "\0")))  # as printed

    def shown(value) -> str:
        key = (type(value), value)
        try:
            found = said.get(key)
        except TypeError:  # a value from the log that is no string (a list): printed each time
            return printed_html(value)
        if found is None:
            found = said[key] = escape(value) if value in clean else printed_html(value)
        return found
    return shown


def _unpriced(models) -> str:
    return printed_html(", ".join(map(str, models)))  # as the template's join: the names joined, then masked


def cost_text(c) -> Markup:
    """A cost ({"cost_usd", "unpriced_models"}): dollars, and "no price" for the models the price table does not
    name (never a guess); nothing when no response recorded usage (the `cost_text` macro)."""
    return Markup(_cost_html(c))


def _cost_html(c) -> str:
    """cost_text's HTML (a tree of hundreds of rows writes two a row into its own: not each made Markup first)."""
    if not c:
        return ""
    if c.get("cost_usd") is not None:
        extra = (f' <span class="no-price" title="no price for {_unpriced(c["unpriced_models"])}">+ no price</span>'
                 if c.get("unpriced_models") else "")
        return f'<span class="usd">{printed_html(costs.usd(c["cost_usd"]))}</span>{extra}'
    if c.get("unpriced_models"):
        return f'<span class="no-price" title="no price for {_unpriced(c["unpriced_models"])}">no price</span>'
    return ""


def _any(c: dict) -> bool:
    return c["cost_usd"] is not None or bool(c["unpriced_models"])


def node_cost(c) -> Markup:
    """An agent's cost on a tree node (costs.tree_costs' entry): its own, and with its sub-agents' when they add
    any (the `node_cost` macro)."""
    return Markup(_node_cost_html(c))


def _node_cost_html(c) -> str:
    if not c or not (_any(c["own"]) or _any(c["subtree"])):
        return ""
    own = _cost_html(c["own"]) if _any(c["own"]) else "$0.00"
    below = (f' · <span class="subtree-cost" title="with every agent below it">{_cost_html(c["subtree"])} with'
             f' sub-agents</span>' if c["subtree"] != c["own"] else "")
    return f'<span class="own-cost" title="what its own responses cost">{own}</span>{below}'


def node_failures(session: dict, agent_id: str, n, url_of=None) -> Markup:
    """An agent's failures and its sub-agents' on a tree node, linked to them; nothing when none. `url_of`: the
    failures page's URL for an agent id (render.query_urls), when the caller links many."""
    if not n:
        return Markup("")
    url = (url_for("pages.failures", session_id=session["id"], agent=agent_id) if url_of is None
           else url_of(agent_id))
    return Markup(f'<a class="badge failed node-failures" href="{printed_html(url)}" title="failures of this agent and its'
                  f' sub-agents">{printed_html(n)} failed</a>')


def node_status(ordinal: int, status: str | None, oob: bool = False, shown=printed_html) -> Markup:
    """A sub-agent's status (queries.agent_status) in the span a live poll replaces; nothing without one. `shown`:
    how a value is printed (printed_html, or a caller's memo of it)."""
    if not status:
        return Markup("")
    before, after = _status_span(status, oob, shown)
    return Markup(before + _number(ordinal) + after)


def _status_span(status: str, oob: bool, shown) -> tuple[str, str]:
    """node_status's span, before the agent's ordinal and after it (the same for every agent of that status)."""
    swap = ' hx-swap-oob="true"' if oob else ""
    return (f'<span class="agent-status status-{shown(status)}" id="av-status-',
            f'" title="{shown(queries.STATUS_MEANINGS[status])}"{swap}>{shown(status)}</span>')


def tree_rows(session: dict, rows) -> Markup:
    """The `<li>` of each row (an agent's summary with its `depth`, `closes`, cost and failures) inside the tree's
    list: its link, badges and the list its sub-agents' rows go in, closed as `closes` says."""
    session_id, rows = session["id"], list(rows)
    failures_url, creator_url = query_urls("pages.failures", "agent", session_id=session_id), None
    links = []  # the link to the message that created each row's agent (None when it names none that is there)
    for node in rows:
        created = node.get("created_by")
        if created and not created.get("missing"):
            creator_url = creator_url or link_urls("pages.agent", session_id)
            links.append(creator_url(created["agent_id"], created["message_id"]))
        else:
            links.append(None)
    shown = _printer([*links, *(text for node in rows for text in (
        node["agent_id"], node["name"], node.get("url"), node.get("language_model"),
        (node.get("created_by") or {}).get("summary")))])

    parts, spans = [], {}  # spans: node_status's, by status
    for node, link in zip(rows, links):
        ordinal, agent_id, name, flags = node["ordinal"], node["agent_id"], node["name"], node.get("flags")
        shown_ordinal, shown_name, shown_id = _number(ordinal), shown(name), shown(agent_id)
        language_model, status, created = node.get("language_model"), node.get("status"), node.get("created_by")
        url = node.get("url") or url_for("pages.agent", session_id=session_id, agent_id=agent_id)
        if not created:
            created_html = ""
        elif created.get("missing"):
            created_html = MISSING.format(printed_html(created["message_id"]))
        else:
            created_html = (f'<span class="created-by">created by <a href="{shown(link)}">'
                            f'<code>{shown(created["summary"])}</code></a></span>')
        if status:
            span = spans.get(status) or spans.setdefault(status, _status_span(status, False, shown))
            status_html = span[0] + shown_ordinal + span[1]
        else:
            status_html = ""
        # What the row shows after its name, each part on a line of its own (the three count spans always there)
        cost, failures = node.get("cost"), node.get("failures")
        shown_parts = (
            (f'<code class="agent-id">{shown_id}</code>\n    ' if name != agent_id else "")
            + (f'<span class="model">{shown(language_model)}</span>\n    ' if language_model else "")
            + (status_html + "\n    " if status_html else "")
            + f'<span class="entry-count"><span id="av-count-{shown_ordinal}">{_number(node["entries"])}</span>'
            f' entries</span>\n    <span class="node-cost" id="av-cost-{shown_ordinal}">'
            f'{_node_cost_html(cost) if cost else ""}</span>\n    <span id="av-failures-{shown_ordinal}">'
            f'{node_failures(session, agent_id, failures, failures_url) if failures else ""}</span>'
            + ("\n    " + created_html if created_html else "") + (IMPLICIT_LINE if node.get("implicit") else ""))
        if flags:
            shown_parts += "".join("\n    " + part for part in (
                INFERRED if "parent_inferred" in flags else "", UNLINKED if "unlinked" in flags else "",
                current_app.jinja_env.get_template("_macros.html").module.node_in_progress(flags),
                CYCLE if "cause_cycle" in flags else "") if part)
        parts.append(
            f'\n<li class="node" id="av-node-{shown_ordinal}" data-agent="{shown_id}">\n'
            f'  <div class="node-row {shown(colour_class(ordinal))}">\n'
            f'    <a class="agent-name" href="{shown(url)}">{shown_name}</a>\n    {shown_parts}\n  </div>\n'
            f'  <details open>\n'
            f'    <summary><span class="visually-hidden">sub-agents of {shown_name}</span></summary>\n'
            f'    <ul class="children" id="av-children-{shown_ordinal}">{CLOSE * node["closes"]}')
    return Markup("".join(parts))


def picker_items(agents, chosen=()) -> Markup:
    """The dialog picker's items: a checkbox per agent (its summary), those whose id is in `chosen` checked."""
    parts, shown = [], _printer(text for agent in agents for text in (agent["agent_id"], agent["name"]))
    for agent in agents:
        agent_id, name = agent["agent_id"], agent["name"]
        shown_id = shown(agent_id)
        parts.append(f'<li><label><input type="checkbox" name="agents" value="{shown_id}"'
                     f'{" checked" if agent_id in chosen else ""}> {shown(name)}'
                     f'{f" <code>{shown_id}</code>" if name != agent_id else ""}</label></li>')
    return Markup("".join(parts))
