"""How fast `agentview push` sends a big native session: events a second, to a local sink and to Phoenix.

    .venv/bin/python benchmarks/push_rate.py [--events 100000] [--runs 3] [--no-old] [--ordered] [--json OUT]
                                             [--phoenix [--phoenix-queue SPANS] [--stored]]

Generates a session of `events` events (benchmarks/generate.py) in a temp folder and reads it once, then times
  - new: viewer.export.push (otlp_wire + otlp_http) to a sink: a real HTTP server in its own process that reads each
    POST whole and answers 200 (so only the pusher's side is measured);
  - ordered (`--ordered`): the same with each session's requests sent one after another, as push --follow does;
  - cli: the whole `agentview push FILE --endpoint SINK` command (start-up and reading the file included);
  - old: the path push took before (each span a ReadableSpan, the SDK's OTLP/HTTP exporter, 1,000 spans a
    request, no compression) to the same sink, as the reference (`--no-old` skips it: about 40 s);
  - phoenix (`--phoenix`): the new path to an Arize Phoenix started in a temp folder on free ports: the push
    (every request answered 200), and with `--stored` how long until Phoenix holds every span. Phoenix queues
    at most PHOENIX_MAX_SPANS_QUEUE_SIZE spans (20,000 by default) and answers 503 past that until its database
    has caught up: with its default, a push of 100k events goes at Phoenix's insert rate, whoever sends it;
    `--phoenix-queue 200000` lets it take the whole session as fast as it can parse it.
Each rate is events / wall seconds of the push; the pusher's own CPU seconds are printed beside it, since the
machine may be shared. Session reading is timed apart (it is the same for both paths).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import generate  # noqa: E402

from viewer.export import otlp, push  # noqa: E402
from viewer.core.redact import masking  # noqa: E402

SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real store

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        while length:
            length -= len(self.rfile.read(min(length, 1 << 20)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_sink() -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}/v1/traces"


def start_phoenix(work: Path, queue: int | None) -> tuple[subprocess.Popen, str]:
    port, grpc = free_port(), free_port()
    env = dict(os.environ, PHOENIX_WORKING_DIR=str(work), PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc),
               PHOENIX_HOST="127.0.0.1", PHOENIX_TELEMETRY_ENABLED="false")
    if queue is not None:
        env["PHOENIX_MAX_SPANS_QUEUE_SIZE"] = str(queue)
    log = open(work / "phoenix.log", "wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "phoenix"), "serve"], cwd=work, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        if process.poll() is not None:
            raise SystemExit((work / "phoenix.log").read_text(errors="replace")[-3000:])
        try:
            if urllib.request.urlopen(base + "/healthz", timeout=2).status == 200:
                return process, base
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("Phoenix did not start within 180 s")
        time.sleep(0.5)


def stop_group(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def cpu_seconds_of(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(fn) -> tuple[float, float]:
    """Wall and CPU (this process) seconds of fn()."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def push_new(path: Path, url: str, timeout: float = 60.0, ordered: bool = False) -> dict:
    _, read = push.sessions_at(str(path))
    read_wall, _ = timed(read)
    sessions = read()  # read already: this only checks the file
    store = push.HttpStore(url, timeout=timeout)
    pusher = push.Pusher(store, ordered=True) if ordered else push.Pusher(store)
    wall, cpu = timed(lambda: pusher.push(sessions))
    store.close()
    events = pusher.events_sent
    return {"events": events, "spans": pusher.spans_sent, "read_s": round(read_wall, 2), "push_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "events_per_s": round(events / wall), "requests": store.requests_sent,
            "bytes_sent": store.bytes_sent}


def best_of(runs: int, measure) -> dict:
    """The fastest of `runs` measurements (the machine may be shared), with every run's seconds."""
    results = [measure() for _ in range(runs)]
    best = min(results, key=lambda r: r["push_s"])
    return {**best, "runs_push_s": [r["push_s"] for r in results]}


def push_old(path: Path, url: str) -> dict:
    """The path push took before: SDK spans, the SDK's OTLP/HTTP exporter, 1,000 spans a request."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from viewer.export import otlp_sdk

    _, read = push.sessions_at(str(path))
    (s,) = read()
    exporter = OTLPSpanExporter(endpoint=url, timeout=60)
    converter = otlp_sdk.Converter()

    def send():
        with s.lock:
            resource = converter.resource(s)
            spans = [converter.span(span, resource) for span in otlp.SpanBuilder(s).spans()]
        for start in range(0, len(spans), 1000):
            assert exporter.export(spans[start:start + 1000]).name == "SUCCESS"
        return len(spans)

    wall, cpu = timed(send)
    exporter.shutdown()
    return {"events": s.count, "push_s": round(wall, 2), "cpu_s": round(cpu, 2), "events_per_s": round(s.count / wall)}


def push_cli(path: Path, url: str) -> dict:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", url, "--timeout", "60"],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr)
    return {"command_s": round(wall, 2), "said": done.stderr.strip()}


def phoenix_count(base: str, trace_id: str) -> int:
    """Spans Phoenix holds of the trace (its REST API, 1,000 a page)."""
    count, cursor = 0, None
    while True:
        url = f"{base}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
        with urllib.request.urlopen(url, timeout=60) as answer:
            page = json.loads(answer.read())
        count += sum(1 for span in page["data"] if span["context"]["trace_id"] == trace_id)
        cursor = page.get("next_cursor")
        if not cursor:
            return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--phoenix", action="store_true", help="also push to a Phoenix started in a temp folder")
    parser.add_argument("--no-old", action="store_true", help="skip the old (SDK) path")
    parser.add_argument("--ordered", action="store_true",
                        help="also push with each session's requests in order (what --follow does)")
    parser.add_argument("--runs", type=int, default=3, help="pushes to the sink; the fastest is reported (default 3)")
    parser.add_argument("--stored", action="store_true", help="with --phoenix: wait until Phoenix holds every span")
    parser.add_argument("--phoenix-queue", type=int, default=None, metavar="SPANS",
                        help="Phoenix's PHOENIX_MAX_SPANS_QUEUE_SIZE (its default, 20,000, answers 503 past it until "
                             "its database catches up: the push then goes at Phoenix's insert rate)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="push_rate_") as temp, masking(True):
        path = Path(temp) / "big.jsonl"
        results["session"] = generate(path, args.events)
        sink, url = start_sink()
        try:
            results["new"] = best_of(args.runs, lambda: push_new(path, url))
            print("new (sink):", results["new"], flush=True)
            if args.ordered:  # what push --follow's first push of a big session costs: its requests one at a time
                results["ordered"] = best_of(args.runs, lambda: push_new(path, url, ordered=True))
                print("new, ordered (sink):", results["ordered"], flush=True)
            results["cli"] = push_cli(path, url)
            print("cli (sink):", results["cli"], flush=True)
            if not args.no_old:
                results["old"] = push_old(path, url)
                print("old (sink):", results["old"], flush=True)
        finally:
            sink.terminate()
            sink.wait()
        if args.phoenix:
            work = Path(temp) / "phoenix"
            work.mkdir()
            phoenix, base = start_phoenix(work, args.phoenix_queue)
            try:
                started = time.monotonic()
                phoenix_cpu = cpu_seconds_of(phoenix.pid)
                results["phoenix"] = push_new(path, f"{base}/v1/traces", timeout=600)  # once: a second is deduplicated
                # what Phoenix spent meanwhile: the machine's other core, if it has two
                results["phoenix"]["phoenix_cpu_s"] = round(cpu_seconds_of(phoenix.pid) - phoenix_cpu, 2)
                print("new (Phoenix):", results["phoenix"], flush=True)
                if args.stored:
                    trace_id = otlp.trace_id_of(path.stem).hex()
                    expected = results["phoenix"]["spans"]
                    while (held := phoenix_count(base, trace_id)) < expected:
                        if time.monotonic() - started > 1800:
                            break
                        time.sleep(5)
                    results["phoenix"]["stored_s"] = round(time.monotonic() - started, 1)
                    results["phoenix"]["stored_spans"] = held
                    print("Phoenix holds", held, "spans after", results["phoenix"]["stored_s"], "s", flush=True)
            finally:
                stop_group(phoenix)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
