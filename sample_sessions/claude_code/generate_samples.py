"""Writes the Claude Code sample sessions (invented data in the shapes of FORMATS.md section 3).

Run: python3 sample_sessions/claude_code/generate_samples.py
One project folder (~/.claude/projects/<encoded cwd>) with three sessions, one per sub-agent layout:
  2.1.x  <sessionId>/subagents/agent-<id>.jsonl + .meta.json (parallel sub-agents, a nested one, a compaction)
  2.0.x  agent-<id>.jsonl beside the main file
  1.x    isSidechain entries inside the main file
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "-home-dev-src-parser"
CWD = "/home/dev/src/parser"


class Writer:
    def __init__(self, session, version, agent=None, sidechain=False):
        self.session, self.version, self.agent, self.sidechain = session, version, agent, sidechain
        self.lines, self.last, self.n, self.clock = [], None, 0, 0

    def _uuid(self):
        self.n += 1
        return f"{(self.agent or self.session)[:8]}-{self.n:04d}"

    def _envelope(self, kind, seconds, **extra):
        uuid = self._uuid()
        line = {"type": kind, "uuid": uuid, "parentUuid": self.last, "isSidechain": self.sidechain,
                "sessionId": self.session, "timestamp": f"2026-02-01T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z",
                "cwd": CWD, "version": self.version, "gitBranch": "main"}
        if self.agent:
            line["agentId"] = self.agent
        line.update(extra)
        self.last = uuid
        return line

    def user(self, seconds, content, **extra):
        self.lines.append(self._envelope("user", seconds, message={"role": "user", "content": content}, **extra))

    def response(self, seconds, msg_id, request_id, model, blocks, usage, stop="end_turn"):
        """One API response: one line per content block, sharing message.id and requestId."""
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            self.lines.append(self._envelope("assistant", seconds + i, requestId=request_id, message={
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [block],
                "stop_reason": stop if last else None, "usage": usage}))

    def raw(self, line):
        self.lines.append(line)

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def tool_result(tool_use_id, text, is_error=False):
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": [{"type": "text", "text": text}]}
    if is_error:
        block["is_error"] = True
    return block


def usage(i, o, read=0, write=0):
    return {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": read, "cache_creation_input_tokens": write}


def current_layout():
    sid = "5b1e8c2a-audit"
    main = Writer(sid, "2.1.60")
    main.raw({"type": "file-history-snapshot", "messageId": "snap-1", "isSnapshotUpdate": False,
              "snapshot": {"messageId": "snap-1", "trackedFileBackups": {}, "timestamp": "2026-02-01T10:00:00.000Z"}})
    main.user(0, "Audit the parser: find its entry points and check the tests cover them.")
    main.response(2, "msg_01A", "req_01A", "claude-opus-4-1", [
        {"type": "thinking", "thinking": "Two independent questions: scan the code and check the tests, in parallel.", "signature": "sig"},
        {"type": "text", "text": "I'll look at the code and the tests in parallel."},
        {"type": "tool_use", "id": "toolu_SCAN", "name": "Task", "input": {
            "description": "Scan parser", "subagent_type": "Explore", "prompt": "List the parser's entry points."}},
        {"type": "tool_use", "id": "toolu_TEST", "name": "Task", "input": {
            "description": "Check tests", "subagent_type": "general-purpose", "prompt": "Which parser functions have tests?"}},
    ], usage(1200, 310, read=9000, write=800), stop="tool_use")

    sub = PROJECT / sid / "subagents"
    scan = Writer(sid, "2.1.60", agent="a11ce5ca", sidechain=True)
    scan.user(7, "List the parser's entry points.")
    scan.response(8, "msg_02A", "req_02A", "claude-haiku-4-5", [
        {"type": "tool_use", "id": "toolu_GREP", "name": "Grep", "input": {"pattern": "^def ", "path": "src/parser.py"}},
        {"type": "tool_use", "id": "toolu_DEEP", "name": "Task", "input": {
            "description": "Read load()", "subagent_type": "Explore", "prompt": "What does load() accept?"}},
    ], usage(400, 90, read=3000), stop="tool_use")
    scan.user(10, [tool_result("toolu_GREP", "src/parser.py:12:def parse(text)\nsrc/parser.py:40:def load(path)")])
    deep = Writer(sid, "2.1.60", agent="dee9c0de", sidechain=True)
    deep.user(11, "What does load() accept?")
    deep.response(12, "msg_03A", "req_03A", "claude-haiku-4-5", [
        {"type": "tool_use", "id": "toolu_READ", "name": "Read", "input": {"file_path": "src/parser.py", "offset": 40}}],
        usage(300, 40), stop="tool_use")
    deep.user(13, [tool_result("toolu_READ", "def load(path: str | Path) -> Tree: ...")])
    deep.response(14, "msg_03B", "req_03B", "claude-haiku-4-5", [
        {"type": "text", "text": "load() accepts a str or a Path."}], usage(380, 12))
    scan.user(16, [tool_result("toolu_DEEP", "load() accepts a str or a Path.\nagentId: dee9c0de")],
              toolUseResult={"agentId": "dee9c0de", "status": "completed"})
    scan.response(17, "msg_02B", "req_02B", "claude-haiku-4-5", [
        {"type": "text", "text": "Entry points: parse(text) and load(path: str | Path)."}], usage(520, 20, read=3000))

    tests = Writer(sid, "2.1.60", agent="7e575a11", sidechain=True)
    tests.user(7, "Which parser functions have tests?")
    tests.response(9, "msg_04A", "req_04A", "claude-sonnet-4-5", [
        {"type": "tool_use", "id": "toolu_LS", "name": "Bash", "input": {"command": "grep -l parser tests/"}}],
        usage(350, 30), stop="tool_use")
    tests.user(12, [tool_result("toolu_LS", "grep: tests/: Is a directory", is_error=True)])
    tests.response(15, "msg_04B", "req_04B", "claude-sonnet-4-5", [
        {"type": "text", "text": "Only parse() has tests (tests/test_parse.py); load() has none."}], usage(420, 25))

    main.user(19, [tool_result("toolu_SCAN", "Entry points: parse(text) and load(path: str | Path).\nagentId: a11ce5ca\n<usage>total_tokens: 1730</usage>")],
              toolUseResult={"agentId": "a11ce5ca", "status": "completed"})
    main.user(20, [tool_result("toolu_TEST", "Only parse() has tests (tests/test_parse.py); load() has none.\nagentId: 7e575a11")],
              toolUseResult={"agentId": "7e575a11", "status": "completed"})
    main.raw({**main._envelope("system", 21, subtype="compact_boundary", content="Conversation compacted",
                                compactMetadata={"trigger": "auto", "preTokens": 151200}), "parentUuid": None,
              "logicalParentUuid": main.last})
    main.user(22, "This session is being continued from a previous conversation. Summary: the parser has two entry "
                  "points; only parse() is tested.", isCompactSummary=True)
    main.user(30, [{"type": "text", "text": "Here is the coverage report:"},
                   {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}])
    main.response(32, "msg_01B", "req_01B", "claude-opus-4-1", [
        {"type": "text", "text": "The parser has two entry points, parse() and load(); load() needs tests."}],
        usage(900, 60, read=12000))
    main.raw({"type": "ai-title", "sessionId": sid, "title": "Parser audit"})
    main.raw({"type": "queue-operation", "operation": "enqueue", "sessionId": sid, "timestamp": "2026-02-01T10:00:40.000Z",
              "content": "and the CLI?"})

    main.write(PROJECT / f"{sid}.jsonl")
    for writer, meta in ((scan, {"agentType": "Explore", "description": "Scan parser", "toolUseId": "toolu_SCAN"}),
                         (deep, {"agentType": "Explore", "description": "Read load()", "toolUseId": "toolu_DEEP"}),
                         (tests, {"agentType": "general-purpose", "description": "Check tests", "toolUseId": "toolu_TEST"})):
        writer.write(sub / f"agent-{writer.agent}.jsonl")
        (sub / f"agent-{writer.agent}.meta.json").write_text(json.dumps(meta) + "\n")


def beside_layout():
    sid = "9c04d7b3-docs"
    main = Writer(sid, "2.0.14")
    main.user(0, "Write a docstring for parse().")
    main.response(1, "msg_11A", "req_11A", "claude-sonnet-4-5", [
        {"type": "tool_use", "id": "toolu_DOC", "name": "Task", "input": {
            "description": "Draft docstring", "subagent_type": "general-purpose", "prompt": "Draft a docstring for parse(text)."}}],
        usage(800, 50), stop="tool_use")
    agent = Writer(sid, "2.0.14", agent="d0c5a9e1", sidechain=True)
    agent.user(3, "Draft a docstring for parse(text).")
    agent.response(4, "msg_12A", "req_12A", "claude-haiku-4-5", [
        {"type": "text", "text": '"""Parse text into a Tree; raises ParseError on bad input."""'}], usage(200, 20))
    main.user(6, [tool_result("toolu_DOC", '"""Parse text into a Tree; raises ParseError on bad input."""')])
    main.response(7, "msg_11B", "req_11B", "claude-sonnet-4-5", [{"type": "text", "text": "Added the docstring."}],
                  usage(900, 8))
    main.write(PROJECT / f"{sid}.jsonl")
    agent.write(PROJECT / f"agent-{agent.agent}.jsonl")


def sidechain_layout():
    sid = "1a2b3c4d-legacy"
    main = Writer(sid, "1.0.98")
    main.user(0, "Rename Tree to Ast everywhere.")
    main.response(1, "msg_21A", "req_21A", "claude-sonnet-4", [
        {"type": "tool_use", "id": "toolu_FIND", "name": "Task", "input": {
            "description": "Find uses", "prompt": "Find every use of Tree."}}], usage(600, 30), stop="tool_use")
    side = Writer(sid, "1.0.98", sidechain=True)
    side.n = 100
    side.user(2, "Find every use of Tree.")
    side.response(3, "msg_22A", "req_22A", "claude-sonnet-4", [
        {"type": "text", "text": "Tree is used in parser.py (4 times) and cli.py (1 time)."}], usage(300, 18))
    result = Writer(sid, "1.0.98")
    result.last, result.n = main.last, 200
    result.user(5, [tool_result("toolu_FIND", "Tree is used in parser.py (4 times) and cli.py (1 time).")])
    result.response(6, "msg_21B", "req_21B", "claude-sonnet-4", [{"type": "text", "text": "Renamed 5 uses."}], usage(700, 6))
    (PROJECT / f"{sid}.jsonl").write_text("".join(json.dumps(l) + "\n" for l in main.lines + side.lines + result.lines))


if __name__ == "__main__":
    current_layout()
    beside_layout()
    sidechain_layout()
