"""The template filters that print log text as HTML (see text.py): each masks first, then renders."""

from __future__ import annotations

from markupsafe import Markup

from viewer.core.redact import ACTIVE, shown

from . import text


def markdown(value) -> Markup | None:
    """The text as rendered Markdown, or None when it holds none (the page shows it as it is)."""
    if not isinstance(value, str) or not value:
        return None
    rendered = text.markdown_html(shown(value), ACTIVE.get())
    return None if rendered is None else Markup(rendered)


def ansi(value) -> Markup:
    """The text, escaped, its ANSI colours as classes (never shown as ␛[1m)."""
    return Markup(text.ansi_html(shown(str(value)), ACTIVE.get()))


def arguments(value) -> Markup:
    """Tool-call arguments (pretty JSON) with strings that hold line breaks shown as text blocks."""
    return Markup(text.arguments_html(shown(str(value)), ACTIVE.get()))


def preview(value) -> str:
    """Plain text for a one-line preview: masked, without escapes, masked again once they are gone."""
    return shown(text.strip_ansi(shown(str(value))))


def install(env) -> None:
    env.filters.update(markdown=markdown, ansi=ansi, arguments=arguments, preview=preview)
