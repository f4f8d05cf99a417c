"""Who may ask, and what they are shown: the Host allowlist, the access token, secret masking."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
from urllib.parse import urlencode, urlsplit

from flask import Flask, abort, current_app, g, redirect, request
from markupsafe import Markup, escape

from viewer.core.redact import ACTIVE, mask, shown, shown_value

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
TOKEN_COOKIE = "agentview_token"
REVEAL_COOKIE = "agentview_reveal"  # set by the page's toggle: per browser, never part of a link


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts_for(bind_host: str, extra: list[str] = ()) -> frozenset[str] | None:
    """The Host header names a server bound to `bind_host` answers; None (any) for a wildcard bind."""
    if bind_host in WILDCARD_HOSTS:
        return None
    return LOOPBACK_NAMES | {bind_host.strip("[]").lower()} | {h.lower() for h in extra}


def host_name(header: str) -> str:
    """`name:port`, `[v6]:port` or `name` -> the name, lowercased (werkzeug's check drops IPv6 names)."""
    if header.startswith("["):
        return header[1 : header.find("]")].lower() if "]" in header else header.lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


def origin_allowed(origin: str | None, allowed: frozenset[str] | None, host: str) -> bool:
    """Whether a request's Origin header may be answered: none (not a browser), or a page served under one of the
    names this server answers for (any name on a wildcard bind: then only this request's own). A page of another
    site that resolves its name to us (DNS rebinding) is refused by name, whatever its Host says."""
    if origin is None:
        return True
    name = urlsplit(origin).hostname
    if not name:
        return False  # "null" (a sandboxed page, a file) or no address at all
    return name.lower() in allowed if allowed is not None else name.lower() == host_name(host)


class EmptyToken(ValueError):
    """An access token of nothing: it would let everyone in, so it is always a mistake."""


def checked_token(token: str | None) -> str | None:
    if token is not None and not token.strip():
        raise EmptyToken("the access token is empty: give a real one, or leave the option out")
    return token


# `token=` in a logged address (a request's path and query, in any logger's message)
_TOKEN_PARAM = re.compile(r"(?i)((?:^|[?&;\s])token=)[^&;\s#\"']*")


class HideTokens(logging.Filter):
    """Keeps the access token out of log lines: `token=` values in logged addresses, and the token
    itself; with `secrets`, also the secrets masking knows (an id in a logged address may hold one).

    Put on the handlers (not on a logger), so records of every logger pass it: the access log,
    waitress, werkzeug.
    """

    def __init__(self, token: str | None = None, secrets: bool = True):
        super().__init__()
        self.token = token
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = _TOKEN_PARAM.sub(r"\1[masked]", message)
        if self.token:
            hidden = hidden.replace(self.token, "[masked]")
        if self.secrets:
            hidden = mask(hidden)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def hide_tokens_in_logs(token: str | None, secrets: bool = True) -> None:
    """On every handler of the root logger (call after logging is configured)."""
    for handler in logging.getLogger().handlers:
        for old in [f for f in handler.filters if isinstance(f, HideTokens)]:  # served again in one process
            handler.removeFilter(old)
        handler.addFilter(HideTokens(token, secrets))


def printed(value):
    """A value as a template prints it: log text masked; a list or mapping (a `role` that is not a
    string, say) printed as JSON, masked, never as Python's repr of it."""
    # Markup (a macro's output) is not a plain str: built from values that passed here
    if type(value) is str:  # shown_value's first case, without its two calls: a page prints thousands
        return mask(value) if ACTIVE.get() else value
    if isinstance(value, (dict, list, tuple)):
        return shown_value(value)
    return value


def printed_html(value) -> Markup:
    """A value written into a page's HTML by Python (the sessions list's rows, the agent tree's) as a template prints
    it: `printed` (masked), then escaped."""
    return escape(printed(value))


def install(app: Flask, *, token: str | None, allowed_hosts: frozenset[str] | None, redact: bool) -> None:
    app.config.update(ACCESS_TOKEN=checked_token(token), ALLOWED_HOSTS=allowed_hosts, REDACT=redact)

    @app.before_request
    def guard():
        # First, so even a refusal below renders with this request's masking (threads serve many requests).
        g.redact = current_app.config["REDACT"] and request.cookies.get(REVEAL_COOKIE) != "1"
        g.masking_token = ACTIVE.set(g.redact)
        allowed = current_app.config["ALLOWED_HOSTS"]
        # A page on another site can resolve its own name to 127.0.0.1 (DNS rebinding); its
        # requests still carry that name in Host, so only names we serve under are answered.
        if allowed is not None and host_name(request.host) not in allowed:
            abort(400, f"This viewer does not answer for the host {request.host!r}.")
        expected = current_app.config["ACCESS_TOKEN"]
        if expected:
            given = request.args.get("token")
            if given is not None and hmac.compare_digest(given.encode(), expected.encode()):
                # Trade the token in the address bar for a cookie, so links shared from here hold no token.
                args = request.args.to_dict(flat=False)
                args.pop("token")
                target = request.path + ("?" + urlencode(args, doseq=True) if args else "")
                response = redirect(target)
                response.set_cookie(TOKEN_COOKIE, expected, httponly=True, samesite="Strict")
                return response
            presented = request.cookies.get(TOKEN_COOKIE, "")
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if not any(hmac.compare_digest(p.encode(), expected.encode()) for p in (presented, bearer) if p):
                abort(401, "This viewer needs its access token: open the address `agentview serve` printed "
                           "(…?token=…), or send `Authorization: Bearer <token>`.")

    @app.teardown_request
    def masking_ends(_error):
        if "masking_token" in g:  # the thread goes on to serve others, or (in tests) to call the API directly
            ACTIVE.reset(g.pop("masking_token"))

    @app.after_request
    def no_caching_of_revealed_pages(response):
        response.vary.add("Cookie")
        if not g.get("redact", True):
            response.headers["Cache-Control"] = "no-store"
        return response

    # Every value a template prints passes here first: one place masks secrets in every page.
    app.jinja_env.finalize = printed
    # Text a template cuts short (a preview, a snippet) is masked whole first: `(text|shown)[:280]`,
    # so no cut leaves part of a secret. Markup (`|tojson`) becomes plain text, so it is masked too.
    app.jinja_env.filters["shown"] = lambda value: shown(str(value))



