"""ai-agent session snapshots (seed 002): one opTree JSON object per file, `.json` or `.json.gz`.

The file is rewritten whole on every snapshot, so it is read whole whenever it changes. Sessions are agents (child
sessions their sub-agents); each turn's prompts and each operation become entries: an llm operation an assistant
entry, a tool or session operation a call paired with its result. (A `.json` file of OTLP lines is tailed instead.)
"""

from __future__ import annotations

import zlib
from datetime import datetime, timezone

import orjson

from viewer.core import failures, jsonio, model
from viewer.core.model import Event
from viewer.core.open_files import OpenFiles
from viewer.files.tailer import FileTailer, Limits, Line, TailResult
from viewer.files.whole_file import WholeFileReader, read_document

from .base import Normalizer, agent_created, as_dict, tool_call

SUFFIXES = (".json", ".json.gz")
# What telling a `.json` file reads first: its head, and a file of OTLP/JSON requests' first line (often long) in one
# read, more than a file of lines needs (base.FIRST_READ)
HEAD_READ = 16 * 1024


def is_snapshot_name(path: str) -> bool:
    return path.endswith(SUFFIXES) and not path.endswith((".meta.json", ".meta.json.gz"))


def looks_like(record: dict) -> bool:
    tree = record.get("opTree")
    return isinstance(tree, dict) or ("turns" in record and ("traceId" in record or "callPath" in record))


class SnapshotReader(WholeFileReader):
    """Reads a snapshot file whole, again each time it changes (a new inode, size or mtime).

    A document that would cost more than `max_file_bytes` parsed (whole_file.read_document) is not read:
    `too_large`.

    A `.json` file whose first line is a whole OTLP/JSON request is not a snapshot but what the OpenTelemetry
    Collector's file exporter writes: one request a line, appended to. Read whole on every change, a growing
    trace file would cost its whole size each time, so from the first read that finds one it is tailed like a
    `.jsonl` file (a FileTailer: only the complete lines appended since, `limit` bytes a read at most). If the
    tailer finds it rewritten, it is looked at again from scratch. One request indented over many lines cannot
    be appended to meaningfully (a second one after it is not a line): it stays a document, read whole.
    """

    def __init__(self, path, inside: str | None = None, limits: Limits | None = None, limit: int | None = None,
                 files: OpenFiles | None = None):
        super().__init__(path, inside, limits)
        self.limit = limit
        self.files = files  # its app's open files, for the tailer it may become
        self.tail: FileTailer | None = None  # set once the file is found to be OTLP/JSON requests, one a line

    def read(self, limit: int | None = None) -> TailResult:
        rewritten = False
        if self.tail is not None:
            result = self.tail.read(limit)
            if not result.restarted:
                return result
            self.tail, self._stamp, rewritten = None, None, True  # what is it now? (what the tailer read is void)
        result = TailResult()
        if (f := self._open_if_changed(result)) is None:
            return result
        result.restarted = result.restarted or rewritten
        with f:
            if _starts_with_a_request_line(f, self.limits.max_line_bytes):
                self.tail = FileTailer(self.path, self.limit, inside=self.inside, limits=self.limits, files=self.files)
                tailed = self.tail.read(limit)
                tailed.restarted = tailed.restarted or result.restarted  # read whole before: from line 1 again
                return tailed
            f.seek(0)
            try:
                data = read_document(f, self.limits, result)
            except (EOFError, zlib.error) as exc:
                result.error = f"gzip stream unreadable: {exc}"
                return result
        if data is not None and data.strip():
            result.lines += _lines_of(data)
        return result


def _starts_with_a_request_line(f, max_line: int) -> bool:
    """Whether the file's first line is complete and a whole OTLP/JSON request (a dict with resourceSpans).
    Anything else (a snapshot: one JSON document, often one long line; gzip; a first line still being
    written) is told from its first bytes or by the first newline, read no further than that."""
    head = f.read(HEAD_READ)
    if head.lstrip()[:1] != b"{" or b'"resourceSpans"' not in head[:200]:
        return False
    while b"\n" not in head and len(head) < max_line:
        more = f.read(min(len(head), max_line - len(head)))
        if not more:
            return False  # no whole first line yet: read whole until it has one
        head += more
    if b"\n" not in head:
        return False
    try:
        record = orjson.loads(head[:head.index(b"\n")])
    except orjson.JSONDecodeError:  # one request indented over many lines: a document
        return False
    return isinstance(record, dict) and "resourceSpans" in record


def _lines_of(data: bytes) -> list[Line]:
    """A document is one line. A file of OTLP/JSON requests one a line (what the OpenTelemetry Collector's file
    exporter writes, to a `.json` file as often as to a `.jsonl` one) is its lines, read by formats.otlp_json."""
    first = data[:data.find(b"\n")] if b"\n" in data else data
    if not first.lstrip()[:1] == b"{" or b'"resourceSpans"' not in first[:200]:
        return [Line(1, data)]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:  # one request, indented over many lines: a document
        return [Line(1, data)]
    if not isinstance(record, dict) or "resourceSpans" not in record:
        return [Line(1, data)]
    return [Line(number, raw) for number, raw in enumerate(data.split(b"\n"), 1) if raw.strip()]


def read_record(path: str, inside: str | None = None) -> tuple[object | None, str]:
    """A snapshot's document, or (None, why there is none); a file that may not or cannot be read raises
    (RefusedFile, PermissionError: the reader opens it through safe_open, `inside` the folder it must lie in)."""
    reader = SnapshotReader(path, inside=inside, limit=HEAD_READ)
    result = reader.read()
    while reader.tail is not None and not result.lines and result.more:  # a file of requests: its first line
        result = reader.read()  # is all it takes, not the whole (maybe huge) file
    if result.error:
        return None, result.error
    if result.problems:
        return None, result.problems[0][2]
    if not result.lines:
        return None, "empty"
    try:
        return orjson.loads(result.lines[0].data), ""
    except orjson.JSONDecodeError:
        return None, "not a JSON document"


def _iso(ms) -> str | None:
    if not isinstance(ms, (int, float)):
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(payload) -> str:
    if payload is None:
        return ""
    if isinstance(payload, str):
        return payload
    return jsonio.text(payload, indent=True)


def _list(value) -> list:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


SHOWN_TURNS, SHOWN_OPS = 200, 100  # of each session and each turn in the outline a page shows (the rest: its agent page)


def outline_rows(outline: dict) -> list[dict]:
    """The outline (session -> turns -> operations -> child sessions) in reading order, as rows a page renders
    in one flat loop: "session", "turn" and "op" open an element (an op with a child session opens a list for
    it), "more" tells what is left out, "close" ends what the last open row of its `what` opened (`child`: an op's list). No recursion:
    any depth of child sessions renders."""
    rows: list[dict] = []
    stack: list[tuple[str, dict]] = [("session", {"node": outline})]
    while stack:
        kind, row = stack.pop()
        rows.append({"kind": kind, **row})
        if kind == "session":
            node = row["node"]
            turns = node["turns"]
            todo = [("turn", {"node": node, "turn": turn}) for turn in turns[:SHOWN_TURNS]]
            if len(turns) > SHOWN_TURNS:
                todo.append(("more", {"count": len(turns) - SHOWN_TURNS, "what": "turns"}))
            stack.extend(reversed([*todo, ("close", {"what": "session"})]))
        elif kind == "turn":
            ops = row["turn"]["ops"]
            todo = [("op", {"node": row["node"], "op": op}) for op in ops[:SHOWN_OPS]]
            if len(ops) > SHOWN_OPS:
                todo.append(("more", {"count": len(ops) - SHOWN_OPS, "what": "operations"}))
            stack.extend(reversed([*todo, ("close", {"what": "turn"})]))
        elif kind == "op":
            child = row["op"].get("child")
            stack.append(("close", {"what": "op", "child": bool(child)}))
            if child:
                stack.append(("session", {"node": child}))
    return rows


class AiAgentNormalizer(Normalizer):
    """Turns one snapshot (the whole opTree) into native events."""

    def __init__(self) -> None:
        super().__init__()
        self.summary: dict | None = None
        self.title: str | None = None
        self.count = 0
        self.last_said: dict[str, str] = {}

    def feed(self, record: dict, line: int, member: dict, source: tuple | None = None) -> list[Event]:
        tree = record.get("opTree") if isinstance(record.get("opTree"), dict) else record
        root_totals = as_dict(tree.get("totals"))
        self.title = str(tree["sessionTitle"])[:120] if tree.get("sessionTitle") else None
        self.summary = {"reason": record.get("reason"), "version": record.get("version"),
                        "in_progress": not tree.get("endedAt"), "success": tree.get("success"),
                        **{k: root_totals.get(k) for k in ("tokensIn", "tokensOut", "tokensCacheRead",
                                                             "tokensCacheWrite", "costUsd", "toolsRun", "agentsRun")}}
        out: list[Event] = []
        self.summary["outline"] = self._session(tree, None, None, "", out)
        return out

    def _id(self, wanted: str) -> str:
        self.count += 1
        return wanted or f"node-{self.count}"

    def _session(self, node: dict, cause: str | None, call_id: str | None, prompt: str, out: list[Event]) -> dict:
        """Its events go to `out`; returns its outline: session -> turns -> operations (-> child sessions).

        Recursive through `_op`, but bounded: a child session nests five levels of JSON below its parent and
        a snapshot is read by orjson (at most 1,024 levels), so at most about 200 sessions deep."""
        agent = str(node.get("id") or node.get("agentId") or f"session-{self.count}")
        shallow = {k: v for k, v in node.items() if k != "turns"}
        created: Event = agent_created(agent, name=str(node.get("agentId") or node.get("sessionTitle") or agent),
                                       timestamp=_iso(node.get("startedAt")), raw=shallow)
        if cause:
            created.update(cause=cause, spawn_call_id=call_id)
        if not node.get("endedAt"):
            created["markers"] = ["in progress"]
        totals = as_dict(node.get("totals"))
        if totals:
            created["totals"] = totals
        model_name = next((str(as_dict(op.get("attributes")).get("model")) for turn in _list(node.get("turns"))
                           for op in _list(turn.get("ops")) if op.get("kind") == "llm"
                           and as_dict(op.get("attributes")).get("model")), None)
        if model_name:
            created["language_model"] = model_name
        out.append(created)
        outline = {"agent_id": agent, "name": created["name"], "in_progress": not node.get("endedAt"),
                   "success": node.get("success"), "turns": []}
        first_user = True
        for turn in _list(node.get("turns")):
            index = turn.get("index", "?")
            base = f"{agent}:turn{index}"
            markers = [f"turn {index}"] + ([] if turn.get("endedAt") else ["in progress"])
            prompts = as_dict(as_dict(turn.get("attributes")).get("prompts"))
            stamp = _iso(turn.get("startedAt"))
            # its operations are entries of their own, each with its own raw: a turn's raw leaves them out, so
            # no raw holds a child session (a deep tree of sessions makes no value deep)
            turn_raw = {k: v for k, v in turn.items() if k != "ops"}
            turn_outline = {"index": index, "in_progress": not turn.get("endedAt"), "message_id": None, "ops": []}
            outline["turns"].append(turn_outline)
            first_of_turn = len(out)
            if not prompts.get("system") and not prompts.get("user"):
                out.append(self._entry(f"{base}", agent, "system", f"Turn {index}", stamp, turn_raw, markers=markers))
            if prompts.get("system"):
                out.append(self._entry(f"{base}:system", agent, "system", _text(prompts["system"]), stamp, turn_raw,
                                       markers=markers))
                markers = []
            if prompts.get("user"):
                entry = self._entry(f"{base}:user", agent, "user", _text(prompts["user"]), stamp, turn_raw, markers=markers)
                if first_user and cause:  # the child's task is the request of the parent's session operation
                    entry.update(substance=cause, original_text=prompt)
                first_user = False
                out.append(entry)
            turn_outline["message_id"] = out[first_of_turn]["message_id"] if len(out) > first_of_turn else None
            for op in _list(turn.get("ops")):
                turn_outline["ops"].append(self._op(agent, op, out))
        return outline

    def _entry(self, message_id: str, agent: str, role: str, content: str, stamp, raw, **extra) -> Event:
        return {"message_id": self._id(message_id), "event_type": model.TRANSCRIPT_ENTRY, "agent_id": agent,
                "role": role, "content": content, "timestamp": stamp, "raw": raw, **extra}

    def _op(self, agent: str, op: dict, out: list[Event]) -> dict:
        kind = op.get("kind")
        attributes = as_dict(op.get("attributes"))
        op_id = str(op.get("opId") or f"op-{self.count}")
        shallow = {k: v for k, v in op.items() if k != "childSession"}
        extra = self._op_extra(op)
        stamp = _iso(op.get("startedAt"))
        summary = {"message_id": None, "kind": str(kind), "status": op.get("status"), "in_progress": not op.get("endedAt"),
                   "label": str(attributes.get("model") if kind == "llm" else attributes.get("name") or kind),
                   "child": None, "cost_usd": extra.get("cost_usd"), "latency_ms": extra.get("latency_ms")}
        if kind == "llm":
            response = as_dict(op.get("response"))
            reasoning = as_dict(op.get("reasoning"))
            thinking = [c.get("text", "") for c in _list(reasoning.get("chunks"))]
            if isinstance(reasoning.get("final"), str) and not thinking:
                thinking = [reasoning["final"]]
            entry = self._entry(op_id, agent, "assistant", _text(response.get("payload")), stamp, shallow,
                                model=attributes.get("model"), provider=attributes.get("provider"), **extra)
            if thinking:
                entry["thinking"] = ["".join(thinking)]
            if op.get("status") == "failed":  # the model's call failed
                entry["failure"] = failures.API_ERROR
            out.append(entry)
            if model.is_utterance(entry):
                self.last_said[agent] = entry["message_id"]
            summary["message_id"] = entry["message_id"]
            return summary
        if kind not in ("tool", "session"):
            out.append(self._entry(op_id, agent, "system", str(attributes.get("name") or kind), stamp, shallow,
                                   **{**extra, "markers": extra.get("markers", []) + [str(kind)]}))
            if op.get("status") == "failed":
                out[-1]["failure"] = failures.ERROR
            summary["message_id"] = out[-1]["message_id"]
            return summary
        request = as_dict(op.get("request")).get("payload")
        arguments = request if isinstance(request, dict) else {"request": request}
        call = self._entry(f"{op_id}:call", agent, "assistant", "", stamp, shallow,
                           tool_calls=[tool_call(op_id, str(attributes.get("name") or kind), arguments)], **extra)
        out.append(call)
        summary["message_id"] = call["message_id"]
        child_agent = None
        child = op.get("childSession")
        if kind == "session" and isinstance(child, dict):
            summary["child"] = self._session(child, call["message_id"], op_id, _text(request), out)
            child_agent = summary["child"]["agent_id"]
        if not op.get("endedAt") and op.get("response") is None:
            return summary  # no result yet: the call is marked in progress
        response = as_dict(op.get("response"))
        result = self._entry(f"{op_id}:result", agent, "tool", _text(response.get("payload")), _iso(op.get("endedAt")),
                             response, tool_call_id=op_id)
        if response.get("truncated"):
            result["markers"] = ["truncated"]
        if op.get("status") == "failed":
            result["is_error"] = True
        if child_agent and child_agent in self.last_said:
            result["substance"] = self.last_said[child_agent]
        out.append(result)
        return summary

    @staticmethod
    def _op_extra(op: dict) -> dict:
        extra: dict = {}
        llm = _list(op.get("accounting"))
        if llm:
            tokens: dict = {}
            for a in llm:
                for src, dst in (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
                                 ("cacheReadInputTokens", "cache_read_input_tokens"),
                                 ("cacheWriteInputTokens", "cache_creation_input_tokens")):
                    value = as_dict(a.get("tokens")).get(src)
                    if isinstance(value, (int, float)):
                        tokens[dst] = tokens.get(dst, 0) + value
            if tokens:
                extra["usage"] = tokens
            costs = [a["costUsd"] for a in llm if isinstance(a.get("costUsd"), (int, float))]
            if costs:
                extra["cost_usd"] = round(sum(costs), 6)
            latencies = [a["latency"] for a in llm if isinstance(a.get("latency"), (int, float))]
            if latencies:
                extra["latency_ms"] = sum(latencies)
        if op.get("status"):
            extra["status"] = str(op["status"])
        if not op.get("endedAt"):
            extra["markers"] = ["in progress"]
        logs = _list(op.get("logs"))
        if logs:
            extra["logs"] = [{"severity": str(l.get("severity", "")), "message": _text(l.get("message")),
                              "timestamp": _iso(l.get("timestamp"))} for l in logs]
        return extra
