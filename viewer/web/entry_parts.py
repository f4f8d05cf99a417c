"""The pieces every transcript entry prints (_entry.html), written in Python: a macro call per link and badge
cost more than what it wrote.

Each function writes exactly what the template wrote (the same bytes), printing every value as a template does
(`put`: finalize, which masks, then autoescape).
"""

from __future__ import annotations

from flask import g
from jinja2.filters import do_urlencode
from markupsafe import Markup, escape

from viewer.core.redact import ACTIVE, shown

from . import text as text_html
from . import text_filters
from .colours import agent_colour, indent_class
from .render import link_url
from .security import printed


def put(value) -> str:
    """`{{ value }}` in a template: masked by finalize (security.printed), then escaped."""
    value = printed(value)
    if type(value) is str:  # markupsafe.escape's replacements, without making a Markup of each piece
        return (value.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;")
                .replace('"', "&#34;"))
    return escape(value)


_PRE_CLASS = {"prose": ' class="content prose"', "json": ' class="content json"'}
_PLAIN_PRE = ' class="content"'


def content(text, limit: int = 700, lines: int = 14, kind: str = "prose") -> Markup:
    """The `content` macro of _macros.html: log text as a text block, folded when long.

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


def entry_text(text, markers) -> Markup:
    """The `entry_text` macro: a slash command as a chip, a command's output as a terminal block, else content."""
    if markers and "command" in markers:
        return Markup(f'<p class="command-line"><code class="command-chip" title="a command the user typed">'
                      f'{put(text)}</code></p>')
    if markers and "command output" in markers:
        return Markup(f'<div class="command-output">{content(text, 2000, 40, "code")}</div>')
    return content(text)


def message_ids(session_id, message_id) -> Markup:
    """An entry's ids: msg_link and permalink of _macros.html, as written side by side in an entry's head."""
    shown_id = put(message_id)
    return Markup(f'<a class="msg" href="{put(link_url("pages.message", session_id, message_id))}">{shown_id}</a> '
                  f'<a class="permalink" href="#{put(do_urlencode(message_id))}" title="link to this message">#</a>'
                  f'\n  <button type="button" class="copy-link" data-anchor="{shown_id}" hidden>copy link</button>')


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


def entry_head(session_id, item, show_agent) -> Markup:
    """An entry's <h3> (_entry.html): its agent on a page that interleaves sub-agents, its kind, where a delivery
    came from, who heard it, an unpaired result's badge, its ids. Line breaks and indents as the template had."""
    out = ['<h3 class="entry-head">\n    ']
    if show_agent:
        out.append(f'<span class="who">{agent_link(session_id, item["agent_id"], item["agent_name"])}</span>')
    out.append(f'\n    <span class="kind">{put(item["kind"])}</span>\n    ')
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
    out.append(f'\n    <span class="ids">{message_ids(session_id, item["message_id"])}</span>\n  </h3>')
    if item.get("failure"):
        out.append(failure_badge(item["failure"]))
    return Markup("".join(out))


def result(session, r, images) -> Markup:
    """result_block of _entry.html: a tool result under its call (`images`: the macro of _images.html)."""
    event = r["event"]  # the macro prints nothing for an event without images: not called for one
    shown = images(session, event) if not isinstance(event, dict) or event.get("images") else ""
    failure = r.get("failure")
    return Markup(f'<div class="result{" failed" if failure else ""}" id="{put(r["message_id"])}">\n  <h4 '
                  f'class="entry-head"><span class="kind">received</span> {message_ids(session["id"], r["message_id"])}'
                  f'</h4>\n  {failure_badge(failure) if failure else ""}{content(r["content"])}\n  {shown}\n</div>')


def spawned(session, a) -> Markup:
    """spawned_link of _entry.html: an agent a call created."""
    return Markup(f'<li>created {agent_link(session["id"], a["agent_id"], a["name"])} <code>{put(a["agent_id"])}'
                  f'</code></li>')


_RAW_ARGUMENTS = ('<span class="badge warn" title="the arguments are not valid JSON; shown as logged">raw arguments'
                  '</span>')


def calls(session, item, images) -> Markup:
    """The tool calls of an entry (the loop of _entry.html): each call's head, arguments, spawned agents, results."""
    out = []
    position = put(item["position"])
    for call in item["calls"]:
        where = f'{position}-{put(call["index"])}'
        valid = call["arguments_valid"]
        call_id = f' <code class="call-id">{put(call["id"])}</code>' if call["id"] else ""
        created = "".join(spawned(session, a) for a in call["spawned"])
        results = "".join(result(session, r, images) for r in call["results"])
        failed = next((r["failure"] for r in call["results"] if r.get("failure")), call.get("failure"))
        mark = (f' <span class="badge failed" title="{put(failed["error"])}">{put(failed["kind"])}</span>'
                if failed else "")
        out.append(f'\n  <div class="call{" failed" if failed else ""}" id="av-call-{where}">\n    <div class="call-head">'
                   f'<span class="tool">{put(call["name"])}</span>{call_id}{mark}\n      '
                   f'{"" if valid else _RAW_ARGUMENTS}</div>\n    '
                   f'{content(call["pretty_arguments"], 1200, 30, "json" if valid else "code")}\n'
                   f'    <ul class="spawned" id="av-spawned-{where}">{created}</ul>\n'
                   f'    <div class="results" id="av-results-{where}">{results}</div>\n  </div>\n  ')
    return Markup("".join(out))


def install(env) -> None:
    """The templates' names for these (the images macro of the app's _images.html given to those that need it)."""
    def images(session, event):
        return env.get_template("_images.html").module.images(session, event)

    env.globals.update(text_block=content, entry_text_block=entry_text, entry_message_ids=message_ids,
                       entry_message_link=message_link, entry_agent_link=agent_link, entry_head=entry_head,
                       entry_open=entry_open, entry_spawned=spawned,
                       entry_result=lambda session, r: result(session, r, images),
                       entry_calls=lambda session, item: calls(session, item, images))
