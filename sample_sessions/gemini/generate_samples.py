"""Writes the Gemini CLI sample chats (invented data in the shapes google-gemini/gemini-cli writes).

Run: python3 sample_sessions/gemini/generate_samples.py
A `~/.gemini/tmp` tree: project `shop`'s main chat (JSONL), the sub-agent it ran and the one that sub-agent ran in
turn (both in `chats/<main session id>/`), and an older one-document `.json` chat.

Shapes, from `packages/core/src/services/chatRecordingService.ts` and `chatRecordingTypes.ts`: the metadata line
(`initialize`: sessionId, projectHash, startTime, lastUpdated, kind), messages appended whole each time they change
(`recordMessage`, then `recordMessageTokens` and `recordToolCalls` append the same message again), `$set` after each
new message (`updateMetadata({lastUpdated})`) and for the summary, `$rewindTo` (`rewindTo`); a sub-agent's file is
`chats/<parentSessionId>/<its sessionId>.jsonl`, kind "subagent"; its call's ToolCallRecord carries `agentId`;
ThoughtSummary is {subject, description}; TokensSummary {input, output, cached, thoughts, tool, total}; a result is
a PartListUnion of `functionResponse` parts; statuses from scheduler/types (CoreToolCallStatus).
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHATS = HERE / "shop" / "chats"
MAIN = "5f1c2a3b-8d4e-4f60-9a7b-1c2d3e4f5a6b"
INVESTIGATOR = "7a1b2c3d-1111-4222-8333-944455566677"
READER = "9c2d3e4f-2222-4333-8444-a55566677788"
HASH = "3f7b0c1de2a94b5c86d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f901a2b3c4"


def stamp(seconds):
    return f"2026-04-20T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z"


class Chat:
    def __init__(self, session_id, kind, seconds):
        self.lines = [{"sessionId": session_id, "projectHash": HASH, "startTime": stamp(seconds),
                       "lastUpdated": stamp(seconds), "kind": kind}]

    def message(self, seconds, **message):
        self.lines.append({"timestamp": stamp(seconds), **message})
        self.lines.append({"$set": {"lastUpdated": stamp(seconds)}})
        return message

    def again(self, message, seconds, **changes):  # pushMessage: the whole message appended again
        message.update(changes)
        self.lines.append({"timestamp": stamp(seconds), **message})

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))


def response(name, call_id, output):
    return [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]


def call(call_id, name, args, seconds, status="executing", **more):
    return {"id": call_id, "name": name, "args": args, "status": status, "timestamp": stamp(seconds),
            "displayName": more.pop("displayName", name), "description": "", "renderOutputAsMarkdown": False, **more}


def tokens(input_, output, cached=0, thoughts=0):
    return {"input": input_, "output": output, "cached": cached, "thoughts": thoughts, "tool": 0,
            "total": input_ + output + thoughts}


def main_chat():
    chat = Chat(MAIN, "main", 0)
    chat.message(1, id="u-1", type="user", content=[{"text": "Why does the login test fail?"}])
    g1 = chat.message(3, id="g-1", type="gemini", content="Let me read the test first.", model="gemini-2.5-pro",
                      thoughts=[{"subject": "Reading the test", "description": "Start from the failing test.",
                                 "timestamp": stamp(2)}], tokens=None)
    chat.again(g1, 3, tokens=tokens(4200, 60, cached=3000, thoughts=40))
    read = call("c-1", "read_file", {"absolute_path": "/home/dev/shop/tests/test_login.py"}, 4,
                displayName="ReadFile")
    chat.again(g1, 4, toolCalls=[read])
    chat.again(g1, 5, toolCalls=[{**read, "status": "success", "result": response(
        "read_file", "c-1", "def test_login():\n    assert login(TOKEN)"), "resultDisplay": ""}])
    g2 = chat.message(6, id="g-2", type="gemini", content="", model="gemini-2.5-pro", tokens=tokens(4600, 30),
                      thoughts=[])
    investigate = call("c-2", "codebase_investigator", {"objective": "Find where TOKEN is made for the tests"}, 7,
                       displayName="Codebase Investigator Agent", agentId=INVESTIGATOR)
    chat.again(g2, 7, toolCalls=[investigate])
    chat.again(g2, 40, toolCalls=[{**investigate, "status": "success", "result": response(
        "codebase_investigator", "c-2", "TOKEN comes from tests/fixtures.py and expired in March."),
        "resultDisplay": "Subagent codebase_investigator finished"}])
    chat.message(42, id="g-3", type="gemini", content="The fixture token expired: the test fails on it.",
                 model="gemini-2.5-pro", tokens=tokens(5100, 25, cached=4000), thoughts=[])
    chat.message(50, id="u-2", type="user", content=[{"text": "Fix it by making a fresh token."}])
    g4 = chat.message(52, id="g-4", type="gemini", content="", model="gemini-2.5-pro", tokens=tokens(5300, 20),
                      thoughts=[])
    shell = call("c-3", "run_shell_command", {"command": "pytest tests/test_login.py"}, 53, displayName="Shell")
    chat.again(g4, 55, toolCalls=[{**shell, "status": "error", "result": response(
        "run_shell_command", "c-3", "Command exited with code 1: 1 failed"),
        "resultDisplay": "FAILED tests/test_login.py::test_login"}])
    chat.lines.append({"$rewindTo": "u-2"})
    chat.message(70, id="u-3", type="user", content=[{"text": "Only explain it, do not change code."}])
    chat.message(72, id="g-5", type="gemini", content="Sure: the token in tests/fixtures.py expired.",
                 model="gemini-2.5-flash", tokens=tokens(5500, 15, cached=5000), thoughts=[])
    chat.message(73, id="i-1", type="info", content="Checkpoint saved.")
    chat.lines.append({"$set": {"summary": "Login test fails on an expired fixture token"}})
    return chat


def investigator_chat():
    chat = Chat(INVESTIGATOR, "subagent", 8)
    chat.message(8, id="s1-u", type="user", content=[{"text": "Find where TOKEN is made for the tests"}])
    g = chat.message(10, id="s1-g1", type="gemini", content="", model="gemini-2.5-flash",
                     tokens=tokens(1200, 20), thoughts=[])
    grep = call("s1-c1", "search_file_content", {"pattern": "TOKEN ="}, 11, displayName="SearchText")
    chat.again(g, 12, toolCalls=[{**grep, "status": "success", "result": response(
        "search_file_content", "s1-c1", "tests/fixtures.py:3: TOKEN = make_token(expires='2026-03-01')")}])
    g2 = chat.message(14, id="s1-g2", type="gemini", content="", model="gemini-2.5-flash",
                      tokens=tokens(1500, 20), thoughts=[])
    read = call("s1-c2", "file_reader", {"prompt": "Read tests/fixtures.py and say when TOKEN expires"}, 15,
                displayName="File Reader Agent")
    chat.again(g2, 15, toolCalls=[read])
    chat.again(g2, 30, toolCalls=[{**read, "agentId": READER, "status": "success", "result": response(
        "file_reader", "s1-c2", "It expires on 2026-03-01.")}])  # the agentId written once it is done
    chat.message(35, id="s1-g3", type="gemini", content="TOKEN comes from tests/fixtures.py and expired in March.",
                 model="gemini-2.5-flash", tokens=tokens(1800, 18), thoughts=[])
    return chat


def reader_chat():
    chat = Chat(READER, "subagent", 16)
    chat.message(16, id="s2-u", type="user", content=[{"text": "Read tests/fixtures.py and say when TOKEN expires"}])
    chat.message(20, id="s2-g1", type="gemini", content="It expires on 2026-03-01.", model="gemini-2.5-flash-lite",
                 tokens=tokens(800, 12), thoughts=[{"subject": "Date", "description": "The expires argument.",
                                                   "timestamp": stamp(19)}])
    return chat


def legacy_chat():
    """Before JSONL chats (gemini-cli PR #23749): one document, rewritten whole."""
    return {"sessionId": "0a1b2c3d-3333-4444-8555-b66677788899", "projectHash": HASH,
            "startTime": "2026-03-02T08:30:00.000Z", "lastUpdated": "2026-03-02T08:31:00.000Z",
            "messages": [
                {"id": "l-1", "timestamp": "2026-03-02T08:30:05.000Z", "type": "user",
                 "content": "List the open TODOs"},
                {"id": "l-2", "timestamp": "2026-03-02T08:30:09.000Z", "type": "gemini",
                 "content": "There are two TODOs, both in checkout.py.", "model": "gemini-2.5-pro",
                 "thoughts": [], "tokens": tokens(900, 14)}]}


if __name__ == "__main__":
    main_chat().write(CHATS / f"session-2026-04-20T10-00-{MAIN[:8]}.jsonl")
    investigator_chat().write(CHATS / MAIN / f"{INVESTIGATOR}.jsonl")
    reader_chat().write(CHATS / MAIN / f"{READER}.jsonl")
    (CHATS / "session-2026-03-02T08-30-0a1b2c3d.json").write_text(json.dumps(legacy_chat(), indent=2) + "\n")
