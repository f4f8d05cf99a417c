"""Writes the Codex CLI sample sessions (invented data in the shapes the openai/codex repository defines).

Run: python3 sample_sessions/codex/generate_samples.py
A `~/.codex/sessions` tree: one day folder holding a root thread's rollout and the rollout of the sub-agent
thread it spawned (`spawn_agent`), whose `session_meta.source` names the root as its parent thread.

Shapes, from openai/codex `codex-rs/protocol/src/protocol.rs` (RolloutLine, RolloutItem, SessionMeta and
SessionSource/SubAgentSource::ThreadSpawn, TurnContextItem, CompactedItem, EventMsg::TokenCount/TokenUsage) and
`codex-rs/protocol/src/models.rs` (ResponseItem: message, reasoning, function_call, function_call_output,
custom_tool_call, custom_tool_call_output), and the rollout fixtures of its tests.
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = HERE / "2026" / "03" / "01"
ROOT = "0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"
CHILD = "0199a1b2-4d5e-7f60-9b0c-1d2e3f4a5b6c"
CWD = "/home/dev/src/parser"


class Rollout:
    def __init__(self, thread, started):
        self.thread, self.started, self.lines, self.clock = thread, started, [], 0

    def add(self, kind, payload, seconds):
        stamp = f"2026-03-01T09:{15 + seconds // 60:02d}:{seconds % 60:02d}.{len(self.lines):03d}Z"
        self.lines.append({"timestamp": stamp, "type": kind, "payload": payload})

    def item(self, seconds, **payload):
        self.add("response_item", payload, seconds)

    def event(self, seconds, **payload):
        self.add("event_msg", payload, seconds)

    def user(self, seconds, text):
        self.item(seconds, type="message", role="user", content=[{"type": "input_text", "text": text}])
        self.event(seconds, type="user_message", message=text, images=[], kind="plain")  # the UI's copy

    def say(self, seconds, text):
        self.item(seconds, type="message", role="assistant", content=[{"type": "output_text", "text": text}])
        self.event(seconds, type="agent_message", message=text)

    def think(self, seconds, summary):
        self.item(seconds, type="reasoning", summary=[{"type": "summary_text", "text": summary}], content=None,
                  encrypted_content="gAAAAABo-invented-ciphertext==")
        self.event(seconds, type="agent_reasoning", text=summary)

    def call(self, seconds, call_id, name, arguments, output):
        self.item(seconds, type="function_call", name=name, arguments=json.dumps(arguments), call_id=call_id)
        self.item(seconds + 1, type="function_call_output", call_id=call_id, output=output)

    def tokens(self, seconds, last, total, window=272000):
        def usage(u):
            i, c, o, r = u
            return {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "reasoning_output_tokens": r,
                    "total_tokens": i + o}
        self.event(seconds, type="token_count", info={"total_token_usage": usage(total), "last_token_usage": usage(last),
                                                      "model_context_window": window},
                   rate_limits={"primary": {"used_percent": 4.0, "window_minutes": 300, "resets_in_seconds": 9000}})

    def write(self):
        DAY.mkdir(parents=True, exist_ok=True)
        path = DAY / f"rollout-2026-03-01T09-{self.started}-{self.thread}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def shell_output(text, code=0):
    return json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.1}})


def meta(thread, source):
    return {"id": thread, "timestamp": "2026-03-01T09:15:00.000Z", "cwd": CWD, "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "instructions": None, "source": source, "model_provider": "openai",
            "git": {"commit_hash": "4f1c2e9", "branch": "main", "repository_url": "git@example.com:dev/parser.git"}}


def turn(model):
    return {"cwd": CWD, "approval_policy": "on-request",
            "sandbox_policy": {"mode": "workspace-write", "network_access": False}, "model": model,
            "effort": "medium", "summary": "auto"}


root = Rollout(ROOT, "15-00")
root.add("session_meta", meta(ROOT, "cli"), 0)
root.user(0, "<environment_context>\n  <cwd>/home/dev/src/parser</cwd>\n  <approval_policy>on-request</approval_policy>\n"
             "  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>bash</shell>\n</environment_context>")
root.add("turn_context", turn("gpt-5-codex"), 1)
root.user(1, "parse() drops the last token. Find why and fix it; have a helper check which tests cover it.")
root.event(1, type="task_started", model_context_window=272000)
root.think(2, "**Locating parse()**\n\nSearch the source for the function first.")
root.call(2, "call_A1", "shell", {"command": ["bash", "-lc", "rg -n 'def parse' src"], "workdir": CWD},
          shell_output("src/parser.py:12:def parse(text):\n"))
root.tokens(4, (5200, 3072, 180, 64), (5200, 3072, 180, 64))
root.call(5, "call_S1", "spawn_agent", {"agent_type": "worker", "message": "Which tests cover parse()? Does one "
                                                                          "cover the last token?"},
          json.dumps({"agent_id": CHILD, "nickname": "Lovelace"}))
root.call(7, "call_W1", "wait", {"ids": [CHILD], "timeout_ms": 60000},
          json.dumps({"status": {CHILD: {"completed": "Only tests/test_parse.py::test_basic covers parse(); "
                                                      "no test covers the last token."}}}))
root.item(20, type="custom_tool_call", status="completed", call_id="call_P1", name="apply_patch",
          input="*** Begin Patch\n*** Update File: src/parser.py\n@@\n-    for i in range(len(tokens) - 1):\n"
                "+    for i in range(len(tokens)):\n*** End Patch")
root.item(21, type="custom_tool_call_output", call_id="call_P1",
          output=shell_output("Success. Updated the following files:\nM src/parser.py\n"))
root.say(22, "Fixed: the loop in parse() stopped one token early (range(len(tokens) - 1)). No test covered it.")
root.tokens(22, (6400, 5120, 240, 32), (11600, 8192, 420, 96))
root.event(22, type="task_complete", last_agent_message="Fixed: the loop in parse() stopped one token early.")
root.add("compacted", {"message": "The user asked to fix parse() dropping its last token; the loop bound was "
                                  "fixed in src/parser.py.", "replacement_history": []}, 30)
root.event(30, type="context_compacted")
root.add("turn_context", turn("gpt-5-codex"), 31)
root.user(31, "Add a test for it.")
root.say(33, "Added tests/test_parse.py::test_last_token.")
root.tokens(33, (2100, 0, 90, 0), (13700, 8192, 510, 96))

child = Rollout(CHILD, "15-06")
child.add("session_meta", meta(CHILD, {"subagent": {"thread_spawn": {
    "parent_thread_id": ROOT, "depth": 1, "agent_path": None, "agent_nickname": "Lovelace", "agent_role": "worker"}}}), 6)
child.add("turn_context", turn("gpt-5-codex-mini"), 6)
child.user(6, "Which tests cover parse()? Does one cover the last token?")
child.think(8, "**Searching tests**")
child.call(8, "call_C1", "shell", {"command": ["bash", "-lc", "rg -n 'parse\\(' tests"], "workdir": CWD},
           shell_output("tests/test_parse.py:5:    assert parse('a b') == ['a', 'b']\n"))
child.say(12, "Only tests/test_parse.py::test_basic covers parse(); no test covers the last token.")
child.tokens(12, (3300, 1024, 120, 40), (3300, 1024, 120, 40))
child.event(12, type="task_complete", last_agent_message="Only test_basic covers parse().")

if __name__ == "__main__":
    root.write()
    child.write()
