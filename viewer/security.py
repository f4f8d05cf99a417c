"""Who may ask, and what they are shown: the Host allowlist, the access token, secret masking."""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlencode

from flask import Flask, abort, current_app, g, redirect, request

from .redact import ACTIVE, shown

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


def install(app: Flask, *, token: str | None, allowed_hosts: frozenset[str] | None, redact: bool) -> None:
    app.config.update(ACCESS_TOKEN=token or None, ALLOWED_HOSTS=allowed_hosts, REDACT=redact)

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
    # Markup (a macro's output) is not a plain str: it was built from values that already passed here.
    app.jinja_env.finalize = lambda value: shown(value) if type(value) is str else value
    # Text a template cuts short (a preview, a snippet) is masked whole first: `(text|shown)[:280]`,
    # so no cut leaves part of a secret. Markup (`|tojson`) becomes plain text, so it is masked too.
    app.jinja_env.filters["shown"] = lambda value: shown(str(value))



