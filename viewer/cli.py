"""The `agentview` command."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import secrets
import shutil
import signal
import sys
import tempfile
from typing import NoReturn


@contextlib.contextmanager
def _made_to_last():
    """No automatic cyclic collection while what lasts as long as the process is made (the modules a server imports,
    its app and URL rules: some 80,000 objects, walked by about a hundred young collections as they were made,
    30-50 ms of a start), then all of it frozen out of the collector's way (gc.freeze: no later collection walks
    it) and the collector's thresholds as they were. Thresholds, not gc.disable: the ingest thread started
    meanwhile pauses the collector on its own (gcpause), by the other switch."""
    thresholds = gc.get_threshold()
    gc.set_threshold(0)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)


def _started(args: argparse.Namespace):
    """The app and its server made (imports first), or the exit status when they cannot be."""
    from .core import pricing
    from .core.tuning import Limits, Tuning
    from .store import session_cache
    from .web import security
    from .web.app import close_app, create_app
    from .web.channel import counted_server

    if args.demo:
        # The demo writes into a fresh temporary folder of our own, never into DIR.
        args.dir = tempfile.mkdtemp(prefix="agentview-demo-")
    elif args.dir is None:
        print("agentview: serve needs a folder (or --demo)", file=sys.stderr)
        return 2
    elif not os.path.isdir(args.dir):
        print(f"agentview: {args.dir} is not a folder", file=sys.stderr)
        return 2
    try:
        security.checked_token(args.token)  # the rule create_app enforces, said here as a command line error
    except security.EmptyToken:
        print("agentview: --token is empty: an empty token would let anyone in; give a real one, or leave "
              "--token out (a random one is made when --host is not loopback)", file=sys.stderr)
        return 2
    try:  # the prices costs are shown at: genai-prices', with the user's file (or AGENTVIEW_PRICES) over them
        prices = pricing.load(args.prices or os.environ.get(pricing.ENV) or None)
    except pricing.PriceFileError as error:
        print(f"agentview: --prices: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.max_line_bytes < 1 or args.max_file_bytes < 1:
        print("agentview: --max-line-bytes and --max-file-bytes must be positive", file=sys.stderr)
        return 2
    tuning = Tuning(limits=Limits(max_line_bytes=args.max_line_bytes, max_file_bytes=args.max_file_bytes),
                    read_workers=args.read_workers)
    token = args.token
    if token is None and not security.is_loopback(args.host):
        token = secrets.token_urlsafe(24)  # reachable from other machines: nobody gets in without it
    cache_dir = None if args.no_cache else (args.cache_dir or session_cache.default_folder())
    app = create_app(args.dir, polling=args.polling, follow_symlinks=args.follow_symlinks, redact=not args.no_redact,
                     token=token, allowed_hosts=security.allowed_hosts_for(args.host, args.allow_host),
                     cache_dir=cache_dir, tuning=tuning, prices=prices)
    security.hide_tokens_in_logs(token, secrets=not args.no_redact)
    try:
        server = counted_server(app, app.extensions["agentview"].runtime.foreground, host=args.host, port=args.port,
                                threads=args.threads, ident="agentview", **connection_options())
    except OSError as error:  # the port is taken, or the address is not ours
        close_app(app)
        if args.demo:
            shutil.rmtree(args.dir, ignore_errors=True)
        print(f"agentview: cannot listen on {args.host}:{args.port}: {error.strerror or error}", file=sys.stderr)
        return 2
    return app, server, token


def serve(args: argparse.Namespace) -> int:
    with _made_to_last():
        started = _started(args)
    if isinstance(started, int):
        return started
    app, server, token = started
    # Stopped by SIGTERM (a service manager, kill) as by Ctrl-C: what the app runs is stopped below (its worker
    # processes ended and waited for, not left to find their socket closed), the demo's folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from .web.app import close_app

    host, port = server.effective_host, server.effective_port
    shown = f"[{host}]" if ":" in str(host) else host
    # The first line on stdout says where we listen (tests start us on port 0 and read it).
    query = f"?token={token}" if token else ""
    print(f"agentview: serving {os.path.abspath(args.dir)} at http://{shown}:{port}/{query}", flush=True)
    demo = None
    if args.demo:
        from .writer.demo import Background

        demo = Background(args.dir).start()
        print(f"agentview: a scripted demo session is being written live: watch "
              f"http://{shown}:{port}/s/demo{query}", flush=True)
    try:
        server.run()
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, SIGTERM
        pass
    finally:
        close_app(app)
        if demo:
            demo.stop()
            shutil.rmtree(args.dir, ignore_errors=True)
    _exit_now()


def _exit_now() -> NoReturn:
    """End a stopped server's process at once: what it ran is stopped and flushed, its worker processes waited for;
    tearing down its heap object by object (a big folder's sessions) took 0.2-0.5 s of CPU that frees nothing the
    system would not."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# An idle connection (open, sending nothing or half a request) is closed after this many seconds.
IDLE_CONNECTION_SECONDS = 60
MAX_CONNECTIONS = 10_000


def connection_limit() -> int:
    """How many connections are open at once: those the descriptors left over from held session files
    allow (core/open_files.py keeps session files to a quarter of the limit), at most MAX_CONNECTIONS: 1,984 under a limit of
    4,096 descriptors, 10,000 under this process's usual limit, 64 under macOS's default of 256.

    Idle or slow clients hold a connection but no request thread, so many of them must not shut out
    the next client (waitress accepts nobody once `connection_limit` are open; its default is 100).
    """
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except ImportError:  # not POSIX
        return 1000
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(32, min(MAX_CONNECTIONS, soft // 2 - 64))  # 64: the log, the listener, watchdog, imports


def connection_options() -> dict:
    """waitress options that keep the server answering whatever its clients do."""
    return {
        # poll() instead of select(): select() cannot watch a descriptor numbered 1024 or more, and a
        # server holding many session files hands out such numbers to new connections.
        "asyncore_use_poll": True,
        "connection_limit": connection_limit(),
        "channel_timeout": IDLE_CONNECTION_SECONDS,
        "cleanup_interval": 10,  # how often idle connections are looked for
    }


def demo(args: argparse.Namespace) -> int:
    from .writer.demo import main

    if args.speed <= 0:
        print("agentview: --speed must be positive", file=sys.stderr)
        return 2
    return main(args.dir, args.speed)


def export(args: argparse.Namespace) -> int:
    from viewer.core.redact import masking
    from viewer.export.text import ExportError
    from viewer.export.text import export as render
    from viewer.reads.session_viewer import NoSuchSession, load_index

    if not os.path.exists(args.session_file):
        print(f"agentview: {args.session_file} is not a file", file=sys.stderr)
        return 2
    agents = [a for a in (args.agents or "").split(",") if a]
    try:
        with masking(not args.no_redact):
            text = render(load_index(args.session_file, session_id=args.session), args.format, args.agent, agents,
                          args.sub)
    except (ExportError, NoSuchSession) as error:
        print(f"agentview: {error}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
    return 0


def _opened(target: str, folder: str | None, library=None, read=None):
    """The session a command names: a session file, or with `folder` a session id in it (the viewer's URLs' id).
    None, having said why on stderr, when there is none. `library`: the folder's, already scanned; `read`: how a
    session file is read (load_index unless given)."""
    from viewer.library.library import Library
    from viewer.reads.session_viewer import NoSuchSession, load_index

    if folder:
        if library is None:
            if not os.path.isdir(folder):
                print(f"agentview: {folder} is not a folder", file=sys.stderr)
                return None
            library = Library(folder)
            library.scan()
        session = library.get(target)
        if session is None:
            known = ", ".join(sorted(s.id for s in library.listing())[:20]) or "none"
            print(f"agentview: no session {target!r} in {folder} (sessions: {known})", file=sys.stderr)
        return session
    if os.path.exists(target):  # a file, or a folder of many sessions (OpenCode's storage folder)
        try:
            return (read or load_index)(target)
        except NoSuchSession as error:  # a file of many: their ids go with --dir
            print(f"agentview: {error} (with --dir {os.path.dirname(target) or '.'})", file=sys.stderr)
            return None
    print(f"agentview: {target} is not a file (a session id needs --dir DIR)", file=sys.stderr)
    return None


def share(args: argparse.Namespace) -> int:
    from viewer.share.page import read_session, share_pieces

    session = _opened(args.session, args.dir, read=read_session)
    if session is None:
        return 2
    if args.agent and args.agent not in session.agents:
        print(f"agentview: no agent {args.agent!r} in this session (agents: {', '.join(session.agent_order)})",
              file=sys.stderr)
        return 2
    pieces = share_pieces(session, args.agent, redact_secrets=not args.no_redact,
                          anonymize_paths=args.anonymize_paths)
    if args.output == "-":
        for piece in pieces:
            sys.stdout.buffer.write(piece)
        sys.stdout.flush()
        return 0
    output = args.output or f"{session.id}.html"
    partial = output + ".partial"
    with open(partial, "wb") as out:
        for piece in pieces:
            out.write(piece)
        size = out.tell()
    os.replace(partial, output)
    print(f"agentview: wrote {output} ({size:,} bytes)", file=sys.stderr)
    return 0


def diff(args: argparse.Namespace) -> int:
    """`agentview diff A B`: exit 0 when the runs agree, 1 when they differ, 2 when they cannot be compared."""
    from viewer.core import jsonio
    from viewer.core.redact import masking, shown_json
    from viewer.export.comparison import comparison_text
    from viewer.library.library import Library
    from viewer.reads.compare import Run, compare

    library = None
    if args.dir:
        if not os.path.isdir(args.dir):
            print(f"agentview: {args.dir} is not a folder", file=sys.stderr)
            return 2
        library = Library(args.dir)
        library.scan()
    runs = []
    for target, agent_id in ((args.a, args.agent_a), (args.b, args.agent_b)):
        session = _opened(target, args.dir, library)
        if session is None:
            return 2
        if agent_id and agent_id not in session.agents:
            print(f"agentview: no agent {agent_id!r} in {target} (agents: {', '.join(session.agent_order)})",
                  file=sys.stderr)
            return 2
        runs.append(Run(session, agent_id or None))
    with masking(not args.no_redact):
        data = compare(*runs)
        out = shown_json(jsonio.answer(data, indent=True)) + b"\n" if args.json else comparison_text(data).encode()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    return 0 if data["agree"] else 1


def mcp(args: argparse.Namespace) -> int:
    """The MCP server over stdio: stdout is the protocol's, so logs and errors go to stderr."""
    from .store import session_cache

    if not os.path.isdir(args.dir):
        print(f"agentview: {args.dir} is not a folder", file=sys.stderr)
        return 2
    if args.url and not args.url.startswith(("http://", "https://")):
        print(f"agentview: --url must be an http:// or https:// URL, not {args.url!r}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    from .mcp import stdio

    cache_dir = None if args.no_cache else (args.cache_dir or session_cache.default_folder())
    try:
        stdio.run(args.dir, base_url=args.url or "", redact=not args.no_redact, polling=args.polling,
                  follow_symlinks=args.follow_symlinks, cache_dir=cache_dir)
    except KeyboardInterrupt:
        pass
    return 0


def _headers(pairs: list[str]) -> dict[str, str] | None:
    headers = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            return None
        headers[key.strip()] = value
    return headers


def push(args: argparse.Namespace) -> int:
    from viewer.core.redact import masking

    from .export import push as pushing

    headers = _headers(args.header)
    if headers is None:
        print("agentview: --header takes KEY=VALUE (e.g. --header 'Authorization=Basic ...')", file=sys.stderr)
        return 2
    if not args.endpoint.startswith(("http://", "https://")):
        print(f"agentview: --endpoint must be an http:// or https:// URL, not {args.endpoint!r}", file=sys.stderr)
        return 2
    store = None
    try:
        with masking(not args.no_redact):
            store = pushing.HttpStore(args.endpoint, headers, args.timeout,
                                      compression=None if args.compression == "none" else args.compression)
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            try:
                pusher = pushing.run(args.target, store, follow=args.follow)
            except (KeyboardInterrupt, SystemExit):  # --follow runs until stopped (Ctrl-C, SIGTERM)
                return _rejections(store)
            finally:
                store.close()
    except pushing.PushError as error:
        print(f"agentview: {error}", file=sys.stderr)
        if store is not None:
            _rejections(store)  # what the store rejected before the push failed is still worth knowing
        return 1
    print(f"agentview: sent {pusher.spans_sent} spans ({pusher.events_sent} events) to {args.endpoint}",
          file=sys.stderr)
    return _rejections(store)


REJECTED_STATUS = 3  # the push went through but the store rejected some spans (1: it failed; 2: bad arguments)


def _rejections(store) -> int:
    """Tell what the store's partial successes said, once, at the end of a push: the exit status."""
    for warning in store.warnings:
        print(f"agentview: the store warned: {warning}", file=sys.stderr)
    if not store.rejected_spans:
        return 0
    said = "; ".join(store.rejections) or "it gave no reason"
    print(f"agentview: {store.rejected_spans} spans rejected by the store: {said}", file=sys.stderr)
    return REJECTED_STATUS


def command(commands, func, help: str, unmasked: str | None = None) -> argparse.ArgumentParser:
    """The parser of a command named as the function that runs it, with the --no-redact every command that prints,
    serves or sends log content takes (`unmasked`: what it then does with secrets; they are masked unless asked)."""
    p = commands.add_parser(func.__name__, help=help)
    p.set_defaults(func=func)
    if unmasked is not None:
        p.add_argument("--no-redact", action="store_true",
                       help=f"{unmasked} secrets (API keys, tokens, auth headers) instead of masking them")
    return p


def sessions_named(p: argparse.ArgumentParser, *names: str) -> None:
    """Sessions given as files or, with --dir, by their ids in that folder (one rule: `_opened`)."""
    for name in names:
        run = f"run {name.upper()}: " if len(names) > 1 else ""
        p.add_argument(name, help=f"{run}a session file, or with --dir a session id (as in the viewer's URLs; an "
                                  "id starting with - goes after --)")
    p.add_argument("--dir", help="the folder the session ids are in")


def build_parser() -> argparse.ArgumentParser:
    from viewer.core.tuning import Limits

    parser = argparse.ArgumentParser(prog="agentview", description="A live web viewer for multi-agent session logs.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = command(commands, serve, help="watch a folder of *.jsonl sessions and serve the viewer", unmasked="show")
    p.add_argument("dir", nargs="?", help="folder to watch (recursively)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    p.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    p.add_argument("--polling", action="store_true",
                   help="poll the folder instead of using OS file events (network or container mounts)")
    p.add_argument("--demo", action="store_true",
                   help="instead of DIR, serve a new temporary folder while a scripted demo session is written "
                        "into it (the folder is removed on exit)")
    p.add_argument("--token", help="access token every request must carry (default: a random one when --host "
                                   "is not loopback, none on loopback)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer requests whose Host header is NAME (repeatable)")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="read files that symlinks lead to outside DIR (default: list them, never read)")
    p.add_argument("--max-line-bytes", type=int, default=Limits.max_line_bytes, metavar="N",
                   help="skip (and report) any line longer than N bytes (default 64 MiB)")
    p.add_argument("--max-file-bytes", type=int, default=Limits.max_file_bytes, metavar="N",
                   help="read at most N inflated bytes of a .jsonl.gz, and no snapshot document costing more "
                        "than N bytes parsed; report the file as too large (default 256 MiB)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="keep what was read of each file here, so a restart reads only what is new (default: "
                        "agentview's folder in your user cache folder; never inside the served folder)")
    p.add_argument("--no-cache", action="store_true", help="read every file from its start on every start")
    p.add_argument("--read-workers", type=int, metavar="N",
                   help="processes that read a folder of many Claude Code sessions the first time, on other cores "
                        "(default: one when there is a core beside the server's; each costs some 55 MB; 0: none, all read in "
                        "the server)")
    p.add_argument("--prices", metavar="FILE",
                   help="a JSON price file whose models win over genai-prices' (its shape: docs/design.md, Prices; "
                        "default: $AGENTVIEW_PRICES, else genai-prices alone)")
    p = command(commands, demo, help="write a scripted multi-agent session into DIR, live, over about a minute")
    p.add_argument("dir", help="folder to write the session into (created if missing)")
    p.add_argument("--speed", type=float, default=1.0, help="play faster (2 = twice as fast; default 1)")
    p = command(commands, export, help="print a session as markdown, a text trace, GraphViz DOT, JSON or "
                                       "OTLP/JSON spans (one ExportTraceServiceRequest a line)", unmasked="print")
    p.add_argument("session_file", help="a session file (.jsonl and the others read), or a file of many sessions "
                                        "(OpenCode's opencode.db) with --session")
    p.add_argument("--format", required=True, choices=["markdown", "trace", "dot", "json", "otlp"])
    p.add_argument("--session", help="of a file of many sessions, the one to print (its id, as in the viewer's URLs)")
    p.add_argument("--agent", help="one agent's perspective (markdown), or only its events (trace, dot)")
    p.add_argument("--agents", help="comma-separated agents: their dialog (markdown), or only their events")
    p.add_argument("--sub", action="store_true", help="with --agent: include its sub-agents' entries")
    p = command(commands, share, help="write a session as one self-contained HTML file that opens offline in "
                                      "any browser (secrets masked)", unmasked="keep")
    sessions_named(p, "session")
    p.add_argument("-o", "--output", help="the file to write (default: SESSION-ID.html here; - for standard output)")
    p.add_argument("--agent", help="open the file on this agent's perspective")
    p.add_argument("--anonymize-paths", action="store_true",
                   help="replace user names in home folder paths (/home/NAME, /Users/NAME) with user1, user2, ...")
    p = command(commands, diff, help="compare two runs: agents matched by name and place, transcripts aligned, "
                                     "the first divergence first (exit 0: they agree, 1: they differ)",
                unmasked="print")
    sessions_named(p, "a", "b")
    p.add_argument("--agent-a", help="compare from this agent of A (its subtree) ...")
    p.add_argument("--agent-b", help="... with this agent of B (its subtree)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON (the /api/compare answer)")
    p = command(commands, mcp, help="serve the sessions below DIR to an agent over MCP (stdio): read-only tools "
                                    "to list, search and read them (docs/mcp.md)", unmasked="show")
    p.add_argument("dir", help="folder of sessions to read (recursively), e.g. ~/.claude/projects")
    p.add_argument("--url", help="the address of a running `agentview serve` of the same folder: links in answers "
                                 "start with it (default: paths only)")
    p.add_argument("--polling", action="store_true", help="poll the folder instead of using OS file events")
    p.add_argument("--follow-symlinks", action="store_true", help="read files that symlinks lead to outside DIR")
    p.add_argument("--cache-dir", metavar="DIR", help="where read sessions are kept between runs (as serve's)")
    p.add_argument("--no-cache", action="store_true", help="read every file from its start on every start")
    p = command(commands, push, help="send sessions to an OpenTelemetry trace store (OTLP/HTTP protobuf)",
                unmasked="send")
    p.add_argument("target", help="a folder of sessions, or one session file")
    p.add_argument("--endpoint", required=True,
                   help="the store's OTLP/HTTP traces URL, e.g. http://localhost:4318/v1/traces")
    p.add_argument("--header", action="append", default=[], metavar="KEY=VALUE",
                   help="an HTTP header every request carries (repeatable), e.g. Authorization=Basic ...")
    p.add_argument("--follow", action="store_true",
                   help="keep running: send each new event as it is logged (a tool call's span when its result is)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds a request may take, retries included")
    p.add_argument("--compression", choices=["auto", "gzip", "none"], default="auto",
                   help="gzip each request; auto (the default): gzip unless the store is on loopback")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
