"""The `agentview` command."""

from __future__ import annotations

import argparse
import logging
import os
import sys


def serve(args: argparse.Namespace) -> int:
    from waitress import create_server

    from .app import create_app

    if not os.path.isdir(args.dir):
        print(f"agentview: {args.dir} is not a folder", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    app = create_app(args.dir, polling=args.polling)
    server = create_server(app, host=args.host, port=args.port, threads=args.threads, ident="agentview")
    host, port = server.effective_host, server.effective_port
    shown = f"[{host}]" if ":" in str(host) else host
    # The first line on stdout says where we listen (tests start us on port 0 and read it).
    print(f"agentview: serving {os.path.abspath(args.dir)} at http://{shown}:{port}/", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        watcher = app.extensions["agentview"].watcher
        if watcher:
            watcher.stop()
    return 0


def export(args: argparse.Namespace) -> int:
    from .exports import ExportError
    from .exports import export as render
    from .session_viewer import load_index

    if not os.path.isfile(args.session_file):
        print(f"agentview: {args.session_file} is not a file", file=sys.stderr)
        return 2
    agents = [a for a in (args.agents or "").split(",") if a]
    try:
        text = render(load_index(args.session_file), args.format, args.agent, agents, args.sub)
    except ExportError as error:
        print(f"agentview: {error}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentview", description="A live web viewer for multi-agent session logs.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("serve", help="watch a folder of *.jsonl sessions and serve the viewer")
    p.add_argument("dir", help="folder to watch (recursively)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    p.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    p.add_argument("--polling", action="store_true",
                   help="poll the folder instead of using OS file events (network or container mounts)")
    p.set_defaults(func=serve)
    p = commands.add_parser("export", help="print a session as markdown, a text trace, GraphViz DOT or JSON")
    p.add_argument("session_file", help="a session .jsonl file")
    p.add_argument("--format", required=True, choices=["markdown", "trace", "dot", "json"])
    p.add_argument("--agent", help="one agent's perspective (markdown), or only its events (trace, dot)")
    p.add_argument("--agents", help="comma-separated agents: their dialog (markdown), or only their events")
    p.add_argument("--sub", action="store_true", help="with --agent: include its sub-agents' entries")
    p.set_defaults(func=export)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
