"""The pure renderer of log text (viewer/web/text.py): Markdown, code, tool arguments, ANSI colours."""

from __future__ import annotations

import re

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from viewer.core.redact import mask
from viewer.web import text

SECRET = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7"


def test_markdown_renders_emphasis_lists_and_highlighted_code():
    html = text.markdown_html("Some **bold** words\n\n- one\n- two\n\n```python\ndef f():\n    return 1\n```\n")
    assert "<strong>bold</strong>" in html
    assert "<li>one</li>" in html
    assert '<pre class="highlight" data-language="python">' in html
    assert '<span class="k">def</span>' in html  # Pygments' token classes, no inline style


def test_text_without_markdown_is_left_to_the_page():
    assert text.markdown_html("just a sentence, with a * star and 3 * 4 = 12") is None


def test_raw_html_in_markdown_stays_text():
    html = text.markdown_html("**hi** <script>alert(1)</script> <img src=x onerror=alert(1)>")
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_links_are_safe_and_marked():
    html = text.markdown_html("see [docs](https://example.org/a) and [bad](javascript:alert(1))")
    assert 'href="https://example.org/a"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "href=\"javascript" not in html  # left as text, never a link


def test_unknown_language_is_plain_escaped_code():
    html = text.markdown_html("```nosuchlanguage\n<b>x</b>\n```")
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>" not in html


def test_ansi_colours_become_classes_and_other_escapes_vanish():
    html = text.ansi_html("\x1b[1;31merror\x1b[0m done\x1b[2K\x1b]0;title\x07")
    assert '<span class="ansi-bold ansi-fg-31">error</span>' in html
    assert "\x1b" not in html and "[1m" not in html and "title" not in html
    assert text.strip_ansi("\x1b[32mok\x1b[0m") == "ok"


def test_ansi_that_splits_a_secret_is_masked_once_removed():
    split = SECRET[:10] + "\x1b[0m" + SECRET[10:]
    assert SECRET not in text.ansi_html(split, remask=True)
    assert "[masked]" in text.ansi_html(split, remask=True)


def test_arguments_show_multiline_strings_as_text_blocks():
    args = orjson.dumps({"path": "notes.md", "content": "# Title\n\n## Part\nline", "n": 3},
                        option=orjson.OPT_INDENT_2).decode()
    html = text.arguments_html(args)
    assert '<span class="j-text"># Title\n\n## Part\nline</span>' in html
    assert '<span class="j-str">&quot;notes.md&quot;</span>' in html or '<span class="j-str">"notes.md"</span>' in html
    assert '<span class="j-lit">3</span>' in html
    assert "\\n" not in html


def test_arguments_that_are_not_json_are_shown_as_they_are():
    assert text.arguments_html("{not json <x>") == "{not json &lt;x&gt;"


def test_masked_arguments_stay_masked():
    raw = orjson.dumps({"headers": f"Authorization: Bearer {SECRET}\nAccept: */*", "password": "Hunter2CorrectHorse99"},
                       option=orjson.OPT_INDENT_2).decode()
    html = text.arguments_html(mask(raw), remask=True)
    assert SECRET not in html and "Hunter2CorrectHorse99" not in html
    assert html.count("[masked]") >= 2


def test_masked_markdown_stays_masked():
    md = text.markdown_html(mask(f"**key**: `{SECRET}`\n\n```bash\nexport OPENAI_API_KEY={SECRET}\n```"), remask=True)
    assert SECRET[:16] not in md and "[masked]" in md


def test_the_stylesheet_holds_both_themes_of_highlighting():
    css = (REPO / "static" / "agentview-text.css").read_text(encoding="utf-8")
    assert text.highlight_stylesheet() in css  # regenerate with highlight_stylesheet() when Pygments changes
    assert "html[data-theme=dark] .highlight .k" in css
    assert "@media (prefers-color-scheme: dark)" in css


def test_logged_headings_sit_below_the_pages_outline():
    html = text.markdown_html("# Title\n\n## Part\n\n###### Deep\n\nbody")
    assert "<h4>Title</h4>" in html and "<h5>Part</h5>" in html and "<h6>Deep</h6>" in html
    assert "<h1" not in html and "<h2" not in html and "<h3" not in html


# The one pattern looks_like_markdown used before it was split in two for speed: the split must find Markdown
# in exactly the texts this found it in.
_MARKDOWN_HINT_BEFORE = re.compile(
    r"(?m)^ {0,3}(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|```|~~~|\|.*\|)"
    r"|\*\*\S|__\S|(?<![\w*])\*\S[^*\n]*\*|`[^`\n]+`|\[[^\]\n]+\]\([^)\s]+\)"
)
_MARKDOWNISH = st.text(alphabet=st.sampled_from(list("ab1 _*`[]()#-+>|~.\n\té")), max_size=40)


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(_MARKDOWNISH)
def test_markdown_is_found_in_the_texts_the_single_pattern_found_it_in(value):
    assert text.looks_like_markdown(value) == bool(_MARKDOWN_HINT_BEFORE.search(value))


def test_markdown_hints_each_found_where_they_stand():
    for value in ["**b", "x __b", "*a*", "a *b* c", "x*b*", "**", "`c`", "[t](u)", "# h", "   - i", "1. x",
                  "> q", "```", "~~~", "|a|", "a\n  2) b", "e*x*", "_*a*"]:
        assert text.looks_like_markdown(value) == bool(_MARKDOWN_HINT_BEFORE.search(value)), value
