"""Log text as HTML people can read: Markdown, highlighted code, pretty tool arguments, ANSI colours.

Pure (no Flask): each function takes text already masked and returns HTML. Markdown is parsed with raw HTML off
and sanitized by nh3; renderings are cached on their text. With `remask` the HTML is masked once more, so a secret
that only markup kept apart is masked once the markup is gone.
"""

from __future__ import annotations

import functools
import html
import re

import nh3
import orjson

from viewer.core import jsonio
from viewer.core.redact import mask

CACHE = 4096
# Code larger than this is shown as plain text: highlighting costs time for no reader's benefit.
HIGHLIGHT_LIMIT = 200_000
# Arguments nested deeper than this are shown as their pretty text, not as a tree of spans.
NESTING_SHOWN = 40

# --- ANSI escapes ----------------------------------------------------------------------------

# SGR (colour, bold) sequences are kept as classes; any other escape sequence is dropped.
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_ESCAPE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?")


def strip_ansi(text: str) -> str:
    """The text without its terminal escape sequences."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


@functools.lru_cache(maxsize=CACHE)
def ansi_html(text: str, remask: bool = False) -> str:
    """Escaped text whose ANSI colours and bold are spans with classes (ansi-fg-N, ansi-bold...)."""
    if "\x1b" not in text:
        return html.escape(text, quote=False)
    plain = strip_ansi(text)
    if remask and mask(plain) != plain:
        # A secret whose pieces only the escapes kept apart: drop the colours, mask the joined text.
        return html.escape(mask(plain), quote=False)
    out: list[str] = []
    classes: list[str] = []
    pos = 0
    for match in _ESCAPE.finditer(text):
        out.append(_span(text[pos : match.start()], classes))
        pos = match.end()
        sgr = _SGR.fullmatch(match.group(0))
        if sgr:
            classes = _apply_sgr(classes, sgr.group(1))
    out.append(_span(text[pos:], classes))
    return "".join(out)


def _span(piece: str, classes: list[str]) -> str:
    if not piece:
        return ""
    escaped = html.escape(piece, quote=False)
    return f'<span class="{" ".join(classes)}">{escaped}</span>' if classes else escaped


def _apply_sgr(classes: list[str], params: str) -> list[str]:
    """The classes after one SGR sequence: 0 resets, 1 bold, 3 italic, 4 underline, 30-37/90-97 colours."""
    codes = [int(c) for c in params.split(";") if c.isdigit()] or [0]
    kept = list(classes)
    for code in codes:
        if code == 0:
            kept = []
        elif code in (1, 3, 4):
            name = {1: "ansi-bold", 3: "ansi-italic", 4: "ansi-underline"}[code]
            if name not in kept:
                kept.append(name)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            kept = [c for c in kept if not c.startswith("ansi-fg-")] + [f"ansi-fg-{code}"]
        elif 40 <= code <= 47 or 100 <= code <= 107:
            kept = [c for c in kept if not c.startswith("ansi-bg-")] + [f"ansi-bg-{code}"]
        elif code == 39:
            kept = [c for c in kept if not c.startswith("ansi-fg-")]
        elif code == 49:
            kept = [c for c in kept if not c.startswith("ansi-bg-")]
    return kept


# --- code -------------------------------------------------------------------------------------

@functools.cache
def _pygments():
    """Pygments and the formatter of every block, imported when a first block is highlighted: a server starts
    without them (a restart serves lists and searches long before any code is shown)."""
    import pygments
    import pygments.lexers
    import pygments.util
    from pygments.formatters import HtmlFormatter

    return pygments, HtmlFormatter(nowrap=True)


def highlighted_code(code: str, language: str) -> str:
    """A <pre class="highlight"> block: Pygments' token classes when the language is known."""
    lexer = None
    name = (language or "").strip().split()[0] if (language or "").strip() else ""
    if name and len(code) <= HIGHLIGHT_LIMIT:
        pygments = _pygments()[0]
        try:
            lexer = pygments.lexers.get_lexer_by_name(name.lower())
        except pygments.util.ClassNotFound:
            lexer = None
    return _highlight_block(code, lexer, name, "highlight")


def _highlight_block(code: str, lexer, name: str, classes: str) -> str:
    pygments, formatter = _pygments()
    body = pygments.highlight(code, lexer, formatter) if lexer else html.escape(code, quote=False)
    label = f' data-language="{html.escape(name)}"' if name else ""
    return f'<pre class="{classes}"{label}><code>{body}</code></pre>'


def highlighted_file(code: str, path: str) -> str:
    """A file's text as a <pre class="highlight file"> block, highlighted as its name says (plain when unknown)."""
    lexer = None
    if len(code) <= HIGHLIGHT_LIMIT:
        pygments = _pygments()[0]
        try:
            lexer = pygments.lexers.get_lexer_for_filename(path.rsplit("/", 1)[-1], code)
        except pygments.util.ClassNotFound:
            lexer = None
    name = (lexer.aliases[0] if lexer.aliases else lexer.name) if lexer else ""
    return _highlight_block(code, lexer, name, "highlight file")


LIGHT_STYLE, DARK_STYLE = "default", "github-dark"


def pygments_css(style: str, scope: str = "") -> str:
    """Pygments' token rules for `style` (colours only: the block's background is the page's), each
    selector under `scope` (`html[data-theme=dark]`, say)."""
    from pygments.formatters import HtmlFormatter

    rules = HtmlFormatter(style=style).get_style_defs(".highlight").splitlines()
    kept = [re.sub(r"\s*/\*.*?\*/", "", rule.strip()) for rule in rules if rule.strip().startswith(".highlight .")]
    return "\n".join(f"{scope} {rule}".strip() for rule in kept if ".hll" not in rule)


def highlight_stylesheet() -> str:
    """Both themes' highlighting: light by default, dark when the system asks for it (unless the page
    is set to light) or when the page is set to dark. static/agentview-text.css holds this text."""
    dark_set = pygments_css(DARK_STYLE, "html[data-theme=dark]")
    dark_system = pygments_css(DARK_STYLE, "html:not([data-theme=light])")
    return (f"{pygments_css(LIGHT_STYLE)}\n{dark_set}\n"
            f"@media (prefers-color-scheme: dark) {{\n{dark_system}\n}}\n")


# --- Markdown -----------------------------------------------------------------------------------

# What makes text worth rendering as Markdown: without any of these it reads the same as plain text.
# Headings, lists, quotes, fences, tables: at a line's start, the first line's or one after a line break (a
# literal the regex engine skips to, where a multi-line ^ would be tried at every position).
_LINE_MARK = r" {0,3}(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|```|~~~|\|.*\|)"
_MARKDOWN_FIRST_LINE = re.compile(_LINE_MARK)
_MARKDOWN_LINE = re.compile("\n" + _LINE_MARK)
# Emphasis, code, links: `**x`, `__x`, `*x*` (after no letter, digit or *), `code`, [text](url). Each branch
# starts with the character it needs, taken first by one class (what it was is checked behind), so the regex
# engine skips to the next *, _, ` or [ instead of trying every branch at every position: 8x faster on prose.
_MARKDOWN_INLINE = re.compile(r"[*_`\[](?:(?<=\*)\*\S|(?<=_)_\S|(?<=\*)(?<![\w*]\*)\S[^*\n]*\*|(?<=`)[^`\n]+`"
                              r"|(?<=\[)[^\]\n]+\]\([^)\s]+\))")


def looks_like_markdown(text: str) -> bool:
    return bool(_MARKDOWN_FIRST_LINE.match(text) or _MARKDOWN_LINE.search(text) or _MARKDOWN_INLINE.search(text))


def _fence(code: str, language: str, _attrs) -> str:
    return highlighted_code(code.rstrip("\n"), language)


HEADING_SHIFT = 3  # a log's "# Title" is a heading inside an entry, below the page's h1 and its sections


def _demote_headings(state) -> None:
    """A page has one h1: headings in logged Markdown start at h4 (h1 -> h4 ... capped at h6), so they
    never compete with the page's outline (screen readers list headings by level)."""
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + HEADING_SHIFT)}"


@functools.cache
def _markdown():
    """The Markdown renderer, made (and markdown-it imported) when a page first renders Markdown: a server that
    lists and searches sessions needs none of it (a sixth of what serving imports)."""
    from markdown_it import MarkdownIt

    made = (MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _fence})
            .enable(["table", "strikethrough"]))
    made.core.ruler.push("demote_headings", _demote_headings)
    return made


_ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code", "pre", "span",
    "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
}
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "pre": {"class", "data-language"},
    "code": {"class"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
}


def sanitized(fragment: str) -> str:
    """HTML cut down to the allowlist: no script, no style, no event handler, links only to the web."""
    return nh3.clean(fragment, tags=_ALLOWED_TAGS, attributes=_ALLOWED_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow",
                     strip_comments=True)


@functools.lru_cache(maxsize=CACHE)
def markdown_html(text: str, remask: bool = False) -> str | None:
    """Markdown as sanitized HTML, or None when the text holds no Markdown (show it as it is)."""
    plain = strip_ansi(text)
    if not looks_like_markdown(plain):
        return None
    rendered = sanitized(_markdown().render(plain))
    return mask(rendered) if remask else rendered


# --- tool-call arguments ------------------------------------------------------------------------

@functools.lru_cache(maxsize=CACHE)
def arguments_html(json_text: str, remask: bool = False) -> str:
    """Pretty JSON whose strings holding line breaks are shown as blocks of text, with real line
    breaks, instead of one line full of `\\n`. Text that is not JSON is shown as it is."""
    try:
        value = jsonio.loads(json_text)
    except orjson.JSONDecodeError:
        return ansi_html(json_text, remask)
    if jsonio.deeper_than(value, NESTING_SHOWN):  # read as text: no recursion that deep
        return ansi_html(json_text, remask)
    out: list[str] = []
    _json_html(value, 0, out, remask)
    return "".join(out)


def _json_html(value, depth: int, out: list[str], remask: bool) -> None:
    pad = "  " * (depth + 1)
    if isinstance(value, dict) and value:
        out.append("{\n")
        for i, (key, item) in enumerate(value.items()):
            out.append(f'{pad}<span class="j-key">{_string(key, remask)}</span>: ')
            _json_html(item, depth + 1, out, remask)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * depth + "}")
    elif isinstance(value, list) and value:
        out.append("[\n")
        for i, item in enumerate(value):
            out.append(pad)
            _json_html(item, depth + 1, out, remask)
            out.append(",\n" if i < len(value) - 1 else "\n")
        out.append("  " * depth + "]")
    elif isinstance(value, str) and "\n" in value.strip("\n"):
        text = mask(value) if remask else value
        out.append(f'<span class="j-text">{ansi_html(text, remask)}</span>')
    elif isinstance(value, str):
        out.append(f'<span class="j-str">{_string(value, remask)}</span>')
    else:
        out.append(f'<span class="j-lit">{html.escape(jsonio.text(value), quote=False)}</span>')


def _string(value: str, remask: bool) -> str:
    shown = orjson.dumps(mask(value) if remask else value).decode()
    return html.escape(mask(shown) if remask else shown, quote=False)
