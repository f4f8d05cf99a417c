"""The pieces every transcript entry prints (_entry.html), written in Python: a macro call per link and badge
cost more than what it wrote.

Each function writes exactly what the template wrote (the same bytes), printing every value as a template does
(`put`: finalize, which masks, then autoescape).
"""

from __future__ import annotations

from flask import g
from jinja2.filters import do_urlencode
from markupsafe import Markup, escape

from viewer.core import times
from viewer.core.redact import ACTIVE, shown
from viewer.reads.costs import usd

from . import edits
from . import text as text_html
from . import text_filters
from .shell import agent_colour, indent_class
from .render import link_url, message_urls
from .security import printed


def put(value) -> str:
    """`{{ value }}` in a template: masked by finalize (security.printed), then escaped."""
    value = printed(value)
    if type(value) is str:  # markupsafe.escape's replacements, without making a Markup of each piece
        return (value.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;")
                .replace('"', "&#34;"))
    return escape(value)


_PRE_CLASS = {"prose": ' class="content prose"', "json": ' class="content json"', "output": ' class="content output"'}
_PLAIN_PRE = ' class="content"'
OUTPUT_PREVIEW_LINES = 6  # a folded output shows its first lines, as written


def content(text, limit: int = 700, lines: int = 14, kind: str = "prose") -> Markup:
    """The `content` macro of _macros.html: log text as a text block, folded when long.

    `kind`: prose (Markdown rendered beside the text as written), json (tool arguments), code, or output (a tool's
    or a command's output: as written, never through Markdown, folded after its first lines).
    The text is masked once here, not once per filter (markdown, ansi and the preview each masked it: a
    long text's masking is most of what printing it costs); what each filter is given is unchanged."""
    active = ACTIVE.get()
    masked = shown(str(text))
    md = None
    if kind == "prose" and isinstance(text, str) and text:  # text_filters.markdown
        rendered = text_html.markdown_html(masked, active)
        md = None if rendered is None else Markup(rendered)
    shown_as = (text_html.arguments_html if kind == "json" else text_html.ansi_html)(masked, active)
    body = (f'<div class="text-block{" has-md" if md else ""}">{f"""<div class="md">{md}</div>""" if md else ""}'
            f'<pre{_PRE_CLASS.get(kind, _PLAIN_PRE)}>{shown_as}</pre>\n    </div>')
    if len(text) > limit or text.count("\n") > lines:
        if kind == "output":
            return _folded_output(text, masked, body, active)
        # text_filters.preview: masked, escapes stripped, masked again. Without escapes and without a
        # secret (masking returned the very same string), the second masking is of the same text: its result.
        plain = text_html.strip_ansi(masked)
        preview = masked if (plain is masked and masked is text) else shown(plain)
        return Markup(f'<details class="long">\n      <summary><span class="preview">{put(preview[:280])}…</span> '
                      f'<span class="more">show all {len(text)} characters</span><span class="less">show less'
                      f'</span></summary>\n      {body}\n    </details>')
    if text:
        return Markup(body)
    return Markup('<p class="empty">(no content)</p>')


def _folded_output(text: str, masked: str, body: str, active: bool) -> Markup:
    """A long output folded: its first lines as written (colours kept), then "show all N lines"."""
    count = text.count("\n") + (0 if text.endswith("\n") else 1)
    head = "\n".join(masked.split("\n", OUTPUT_PREVIEW_LINES)[:OUTPUT_PREVIEW_LINES])[:2000]
    preview = text_html.ansi_html(head, active)  # cut from the masked whole: no cut leaves part of a secret
    return Markup(f'<details class="long output">\n      <summary><pre class="preview content output">{preview}</pre>'
                  f'<span class="more">show all {count} lines</span><span class="less">show less</span></summary>'
                  f'\n      {body}\n    </details>')


def entry_text(text, markers, kind=None) -> Markup:
    """The `entry_text` macro: a slash command as a chip, a command's output as a terminal block, a tool's result
    as written, else content (prose)."""
    if markers and "command" in markers:
        return Markup(f'<p class="command-line"><code class="command-chip" title="a command the user typed">'
                      f'{put(text)}</code></p>')
    if markers and "command output" in markers:
        return Markup(f'<div class="command-output">{content(text, 2000, 20, "output")}</div>')
    if kind == "received":
        return content(text, 2000, 20, "output")
    return content(text)


def message_ids(session_id, message_id, url=None) -> Markup:
    """An entry's ids: msg_link and permalink of _macros.html, side by side (`url`: its message page's, when made)."""
    shown_id = put(message_id)
    url = link_url("pages.message", session_id, message_id) if url is None else url
    return Markup(f'<a class="msg" href="{put(url)}">{shown_id}</a> '
                  f'<a class="permalink" href="#{put(do_urlencode(message_id))}" title="link to this message">#</a>'
                  f'\n  <button type="button" class="copy-link" data-anchor="{shown_id}" hidden>copy link</button>')


def entry_menu(session_id, message_id, raw: str = "") -> Markup:
    """An entry's menu: its id (to its message page), a link to it here, copy link, its JSON, the record it was
    read from; folded behind one button so they are not on every entry's face."""
    page_url, json_url = message_urls(session_id, message_id)
    return Markup(f'<details class="entry-menu"><summary title="message id, link, JSON" aria-label="entry menu">'
                  f'<span aria-hidden="true">&#8943;</span></summary><div class="menu-body">'
                  f'<span class="ids">{message_ids(session_id, message_id, page_url)}</span>'
                  f'<a class="json" href="{put(json_url)}">JSON</a>{raw}</div></details>')


def message_link(session_id, message_id) -> Markup:
    """msg_link of _macros.html (without a label)."""
    url = link_url("pages.message", session_id, message_id)
    return Markup(f'<a class="msg" href="{put(url)}">{put(message_id)}</a>')


def agent_link(session_id, agent_id, name, anchor=None) -> Markup:
    """agent_link of _macros.html. A page links the same few agents hundreds of times (every listener of every
    utterance): each link is made once per request (kept in flask.g; masking, which may change between
    requests, is part of its key)."""
    made = g.setdefault("agentview_agent_links", {})
    key = (session_id, agent_id, name, anchor, ACTIVE.get())
    link = made.get(key)
    if link is None:
        url = link_url("pages.agent", session_id, agent_id, anchor)
        link = made[key] = Markup(f'<a class="agent {put(agent_colour(session_id, agent_id))}" href="{put(url)}">'
                                  f'{put(name)}</a>')
    return link


_MODIFIED = ('<span class="badge modified" title="the delivered text does not contain the original verbatim: '
             'something changed it on its way">modified on its way</span>')
_UNPAIRED = ("<span class=\"badge warn\" title=\"no tool call with this tool_call_id in this agent's transcript\">"
             "unpaired result</span>")


_OOB = ' hx-swap-oob="true"'


def failure_badge(failure) -> str:
    """A failed entry's mark (core/failures.py): its kind, and its error's first line with a button copying it."""
    error = put(failure["error"])
    return (f'<p class="failure-line" role="note"><span class="badge failed">{put(failure["kind"])}</span> '
            f'<span class="failure-text">{error}</span> <button type="button" class="copy-error" '
            f'data-copy="{error}" title="copy the error" hidden>copy</button></p>')


def entry_open(session_id, item, show_agent, oob, top) -> Markup:
    """An entry's <article> tag (its kind, modified, rewound, its indent below the page's agent), and on a branch
    the conversation was rewound from, the fold that starts it (its preview as text_filters.preview makes it)."""
    delivery = item["delivery"]
    rewound = item.get("rewound")
    classes = (f'entry kind-{put(item["kind"])}{" modified" if delivery and delivery["modified"] else ""}'
               f'{" rewound" if rewound else ""}{" failed" if item.get("failure") else ""}'
               f'{" " + put(indent_class(session_id, item["agent_id"], top)) if show_agent else ""}')
    tag = (f'<article class="{classes}" id="{put(item["message_id"])}"{_OOB if oob else ""}'
           f' data-position="{put(item["position"])}" tabindex="-1">')
    if rewound:
        tag += (f'<details class="rewound-branch"><summary><span class="badge rewound" title="the conversation went '
                f'back to {put(rewound)} and went on from there: this entry is on the branch it left">rewound</span> '
                f'<span class="kind">{put(item["kind"])}</span> <span class="preview">'
                f'{put(text_filters.preview(item["content"])[:160])}</span></summary>')
    return Markup(tag)


_KIND_MEANING = {"heard": "what this agent heard", "did": "what this agent did: tool calls",
                 "received": "what this agent received: a tool's result", "said": "what this agent said",
                 "system": "the system prompt or a system note", "noted": "an entry of another role"}
_SPEAKER = {"received": "Tool", "system": "System"}


def speaker(item) -> Markup:
    """Who speaks, in the reader's words: User, Assistant (a sub-agent by its name), Tool, System, or the agent
    a message was delivered from."""
    kind, delivery = item["kind"], item["delivery"]
    if kind == "heard":
        name = delivery["from_name"] if delivery and delivery["from_agent_id"] else "User"
    elif kind in ("did", "said"):
        name = "Assistant" if not item.get("agent_ordinal") else item["agent_name"]
    else:
        name = _SPEAKER.get(kind) or (item["role"] if isinstance(item["role"], str) and item["role"] else "Note")
    return Markup(f'<span class="speaker">{put(name)}</span>')


def message_title(item) -> str:
    """A message's page heading, as a reader would say what it is: "Writer heard Researcher", "Writer said",
    "Writer called Read, Grep", "Writer received a tool's result"; another event by its type."""
    agent, kind, delivery = item["agent_name"], item["kind"], item["delivery"]
    if kind == "heard":
        return f"{agent} heard {delivery['from_name'] if delivery and delivery['from_agent_id'] else 'the user'}"
    if kind == "did":
        return f"{agent} called {', '.join(dict.fromkeys(str(c['name']) for c in item['calls']))}"
    if kind == "received":
        return f"{agent} received a tool's result"
    if kind == "system":
        return f"{agent}'s system prompt"
    if kind == "said":
        return f"{agent} said"
    return f"{str(item['event'].get('event_type') or 'an event').replace('_', ' ').capitalize()} by {agent}"


def entry_head(session_id, item, show_agent) -> Markup:
    """An entry's <h3> (_entry.html): its agent on a page that interleaves sub-agents, who speaks, its kind (the
    perspective's meaning, quietly), where a delivery came from, who heard it, an unpaired result's badge. Its ids
    are in its menu (entry_menu)."""
    out = ['<h3 class="entry-head">\n    ']
    if show_agent:
        out.append(f'<span class="who">{agent_link(session_id, item["agent_id"], item["agent_name"])}</span>')
    kind = put(item["kind"])
    out.append(f'\n    {speaker(item)} <span class="kind" title="{_KIND_MEANING.get(item["kind"], "")}">{kind}</span>'
               f'{_turn(item)}\n    ')
    delivery = item["delivery"]
    if delivery:
        out.append('\n      <span class="from">from\n        ')
        if delivery["from_agent_id"]:
            out.append(agent_link(session_id, delivery["from_agent_id"], delivery["from_name"],
                                  delivery["original_id"]))
        else:
            out.append("an unknown sender")
        out.append(f'\n        · original {message_link(session_id, delivery["original_id"])}')
        if not delivery["original_found"]:
            out.append(' <span class="badge warn">missing</span>')
        out.append("\n      </span>\n      ")
        if delivery["modified"]:
            out.append(_MODIFIED)
        out.append("\n    ")
    out.append("\n    ")
    if item["heard_by"]:
        heard = ", ".join(agent_link(session_id, h["agent_id"], h["name"]) for h in item["heard_by"])
        out.append(f'<span class="heard-by">heard by {heard}</span>')
    out.append("\n    ")
    if item["kind"] == "received" and not item["paired_call"]:
        out.append(_UNPAIRED)
    out.append('\n  </h3>')
    if item.get("failure"):
        out.append(failure_badge(item["failure"]))
    return Markup("".join(out))


def result(session, r, images) -> Markup:
    """result_block of _entry.html: a tool result under its call, as the tool wrote it (`images`: the macro of
    _images.html)."""
    event = r["event"]  # the macro prints nothing for an event without images: not called for one
    shown = images(session, event) if not isinstance(event, dict) or event.get("images") else ""
    failure = r.get("failure")
    return Markup(f'<div class="result{" failed" if failure else ""}" id="{put(r["message_id"])}">\n  <h4 '
                  f'class="entry-head"><span class="speaker">Tool</span> <span class="kind" '
                  f'title="{_KIND_MEANING["received"]}">received</span></h4>{entry_menu(session["id"], r["message_id"])}'
                  f'\n  {failure_badge(failure) if failure else ""}{content(r["content"], 2000, 20, "output")}\n'
                  f'  {shown}\n</div>')


def spawned(session, a, outcome: str = "") -> Markup:
    """spawned_link of _entry.html: an agent a call created, inline: its name (a link to its page), its entries
    and cost when known, and how its call ended (`outcome`)."""
    facts = []
    if a.get("entries") is not None:
        facts.append(f'{a["entries"]} entr{"y" if a["entries"] == 1 else "ies"}')
    if a.get("cost_usd") is not None:
        facts.append(usd(a["cost_usd"]))
    shown_facts = f' <span class="agent-facts">{" · ".join(facts)}</span>' if facts else ""
    return Markup(f'<li class="sub-agent">created {agent_link(session["id"], a["agent_id"], a["name"])} '
                  f'<code>{put(a["agent_id"])}</code>{shown_facts}{outcome}</li>')


_RAW_ARGUMENTS = ('<span class="badge warn" title="the arguments are not valid JSON; shown as logged">raw arguments'
                  '</span>')


def duration(seconds: float) -> str:
    """A call's duration as people say it: 850 ms, 5.9 s, 2 min 5 s."""
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {round(seconds % 60)} s"


def _turn(item) -> str:
    """How long the model took to answer, where the log has both times: from its input to this response."""
    start = times.seconds(item.get("answered_at"))
    end = times.seconds(item["event"].get("timestamp")) if start is not None else None
    if end is None or end < start:
        return ""
    return f' <span class="turn-duration" title="from the input it answered to this response">turn {duration(end - start)}</span>'


def _failure(call) -> dict | None:
    """How a call failed (core/failures.py): its first failed result's, or its own when none ever came."""
    return next((r["failure"] for r in call["results"] if r.get("failure")), call.get("failure"))


def _status(item, call) -> str:
    """A call's one-line status: how it ended (a failed result, a result) or that none came yet; how long it took."""
    results = call["results"]
    if not results:
        if call.get("failure"):
            return '<span class="call-status status-error" title="the session ended without a result">no result</span>'
        return '<span class="call-status status-pending" title="no result logged yet">no result</span>'
    failed = _failure(call) is not None
    state = ('<span class="call-status status-error">error</span>' if failed else
             '<span class="call-status status-done" title="a result came back">done</span>')
    start, end = times.seconds(item["event"].get("timestamp")), times.seconds(results[0]["event"].get("timestamp"))
    if start is not None and end is not None and end >= start:
        state += f' <span class="call-duration" title="from the call to its result">{duration(end - start)}</span>'
    return state


def _one_line(call, args) -> str:
    """The argument a reader looks for first (a path, a command, a pattern...), else all of them, shortened."""
    if isinstance(args, dict):
        for key in LINE_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())[:160]
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return " ".join(" ".join(value).split())[:160]
    summary = call["summary"]
    name = call["name"] or ""
    return summary[len(name) + 1:-1] if summary.startswith(f"{name}(") and summary.endswith(")") else summary


LINE_KEYS = ("file_path", "filePath", "path", "absolute_path", "command", "cmd", "pattern", "query", "q", "url",
             "description", "prompt")


def call_html(session, item, call, images) -> str:
    """One tool call: a one-line summary (tool, what it acts on, +N −M for an edit, status, duration) that opens in
    place onto its arguments (an edit's diff, a written file highlighted) and results; the agents it created below,
    on its face."""
    where = f'{put(item["position"])}-{put(call["index"])}'
    valid = call["arguments_valid"]
    args = edits.parse_arguments(call)
    change = edits.file_change(call["name"] or "", args)
    stat = ""
    if change is not None:
        stat = " " + edits.counts_html(*edits.change_counts(change))
        body = (f'{edits.change_html(change)}<details class="call-args"><summary>arguments as logged</summary>'
                f'{content(call["pretty_arguments"], 1200, 30, "json" if valid else "code")}</details>')
    else:
        body = content(call["pretty_arguments"], 1200, 30, "json" if valid else "code")
    call_id = f'<p class="call-id">call <code>{put(call["id"])}</code></p>' if call["id"] else ""
    results = "".join(result(session, r, images) for r in call["results"])
    classes = (" file-edit" if change is not None else "") + (" failed" if _failure(call) else "")
    return (f'\n  <div class="call{classes}" id="av-call-{where}">\n'
            f'    <details class="call-body" open><summary class="call-head"><span class="tool">{put(call["name"])}'
            f'</span> <span class="call-line">{put(_one_line(call, args))}</span>{stat} {_call_state(item, call, where)}'
            f'</summary>\n      {"" if valid else _RAW_ARGUMENTS}{call_id}\n    {body}\n'
            f'    <div class="results" id="av-results-{where}">{results}</div></details>\n'
            f'    {_spawned_list(session, item, call, where)}\n  </div>\n  ')


def _call_state(item, call, where: str, oob: bool = False) -> str:
    """A call's status and duration, and how it failed: the part of its line a live poll redraws."""
    failed = _failure(call)
    mark = f' <span class="badge failed" title="{put(failed["error"])}">{put(failed["kind"])}</span>' if failed else ""
    return f'<span class="call-state" id="av-state-{where}"{_OOB if oob else ""}>{_status(item, call)}{mark}</span>'


def _spawned_list(session, item, call, where: str, oob: bool = False) -> str:
    """The agents a call created, each with its facts and, once the call has its result, how it ended."""
    outcome = ""
    if call["spawned"] and call["results"]:
        first = text_filters.preview(call["results"][0]["content"]).strip().split("\n", 1)[0][:160]
        outcome = f' <span class="agent-outcome">{_status(item, call)} {put(first)}</span>' if first else ""
    created = "".join(spawned(session, a, outcome) for a in call["spawned"])
    return f'<ul class="spawned" id="av-spawned-{where}"{_OOB if oob else ""}>{created}</ul>'


def call_redrawn(session, c) -> Markup:
    """A call already on a page, as a live poll redraws it (live_updates.calls_to_redraw): its state, its agents."""
    item, call = {"event": c["event"]}, c["call"]
    where = f'{put(c["call_position"])}-{put(c["call_index"])}'
    return Markup(_call_state(item, call, where, oob=True) + _spawned_list(session, item, call, where, oob=True))


def calls(session, item, images) -> Markup:
    """The tool calls of an entry (the loop of _entry.html); calls made together (one response's) grouped."""
    made = "".join(call_html(session, item, call, images) for call in item["calls"])
    count = len(item["calls"])
    if count > 1:
        return Markup(f'<div class="parallel" role="group" aria-label="parallel · {count} calls">'
                      f'<p class="parallel-head">parallel · {count} calls</p>{made}</div>')
    return Markup(made)


def install(env) -> None:
    """The templates' names for these (the images macro of the app's _images.html given to those that need it)."""
    def images(session, event):
        return env.get_template("_images.html").module.images(session, event)

    env.globals.update(text_block=content, entry_text_block=entry_text, entry_menu=entry_menu,
                       entry_message_link=message_link, entry_agent_link=agent_link, entry_head=entry_head,
                       entry_open=entry_open, entry_spawned=spawned, message_title=message_title, call_redrawn=call_redrawn,
                       entry_result=lambda session, r: result(session, r, images),
                       entry_calls=lambda session, item: calls(session, item, images))
