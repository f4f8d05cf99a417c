"""Writes the GitHub Copilot CLI sample session (invented data in the shapes the Copilot CLI writes).

Run: python3 sample_sessions/copilot/generate_samples.py
A `~/.copilot/session-state` folder: one session's `events.jsonl` (and its `workspace.yaml`), with two levels of
inline sub-agents, a failed sub-agent and a failed tool call.

Shapes, from github/copilot-sdk `nodejs/src/generated/session-events.ts` (SessionEvent: `{id, timestamp, parentId,
type, data}` and a sub-agent's `agentId`; StartData with `context`, UserMessageData, AssistantMessageData with
`toolRequests` {toolCallId, name, arguments, type}, `reasoningText`, `model`, `outputTokens`; AssistantReasoningData;
ToolExecutionStartData / ToolExecutionCompleteData with `success`, `result` {content, detailedContent}, `error`
{message, code}; SubagentStartedData {toolCallId, agentName, agentDisplayName, agentDescription, parentId, model};
SubagentCompletedData; SubagentFailedData {error}; AssistantUsageData; ShutdownData), and the events.jsonl lines in
kenn-io/agentsview `internal/parser/copilot_test.go`. The second sub-agent's events use the older
`data.parentToolCallId` instead of `agentId`.
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSION = "b7e3c1d2-4a5f-4b6c-9d8e-0f1a2b3c4d5e"
CWD = "/home/dev/src/shop"


class Events:
    def __init__(self):
        self.lines = []

    def add(self, seconds, kind, data, agent=None):
        line = {"id": f"e{len(self.lines) + 1:03d}-{SESSION[:8]}", "timestamp": f"2026-05-11T14:{seconds // 60:02d}:"
                f"{seconds % 60:02d}.{len(self.lines):03d}Z", "parentId": self.lines[-1]["id"] if self.lines else None,
                "type": kind, "data": data}
        if agent:
            line["agentId"] = agent
        self.lines.append(line)

    def call(self, seconds, call_id, name, arguments, content="", model="claude-sonnet-4.5", agent=None,
             tokens=None, **more):
        data = {"messageId": f"m-{call_id}", "content": content, "toolRequests": [
            {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}], "model": model, **more}
        if tokens:
            data["outputTokens"] = tokens
        self.add(seconds, "assistant.message", data, agent)
        self.add(seconds, "tool.execution_start", {"toolCallId": call_id, "toolName": name, "arguments": arguments,
                                                   "model": model}, agent)

    def done(self, seconds, call_id, content, agent=None, success=True, **more):
        data = {"toolCallId": call_id, "success": success, "model": "claude-sonnet-4.5", **more}
        if success:
            data["result"] = {"content": content}
        else:
            data["error"] = {"message": content, "code": "failure"}
        self.add(seconds, "tool.execution_complete", data, agent)


def session():
    e = Events()
    e.add(0, "session.start", {"sessionId": SESSION, "version": 1, "producer": "copilot-agent",
                               "copilotVersion": "0.0.354", "startTime": "2026-05-11T14:00:00.000Z",
                               "selectedModel": "claude-sonnet-4.5",
                               "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main", "repository": "dev/shop"}})
    e.add(2, "user.message", {"content": "Why are checkout totals off by a cent?",
                              "transformedContent": "Why are checkout totals off by a cent?", "attachments": []})
    e.add(3, "assistant.turn_start", {"turnId": "0"})
    e.add(4, "assistant.reasoning", {"reasoningId": "r-1", "content": "Totals are summed somewhere: read that first."})
    e.call(5, "toolu_01", "view", {"path": "src/totals.py"}, content="I'll read the totals code.", tokens=120)
    e.done(6, "toolu_01", "def total(items):\n    return round(sum(i.price for i in items), 2)")
    e.add(6, "assistant.usage", {"model": "claude-sonnet-4.5", "inputTokens": 5200, "outputTokens": 120,
                                 "cacheReadTokens": 4000, "cacheWriteTokens": 0, "cost": 1, "duration": 2100})
    e.add(7, "session.title_changed", {"title": "Checkout totals off by a cent"})
    task = {"agent_type": "explore", "description": "Find rounding", "prompt": "Find every place totals are rounded"}
    e.call(8, "toolu_02", "task", task, tokens=60)
    e.add(9, "subagent.started", {"toolCallId": "toolu_02", "agentName": "explore", "agentDisplayName": "Explore Agent",
                                  "agentDescription": "Fast codebase exploration", "model": "claude-haiku-4.5"},
          "sa-explore")
    e.call(10, "toolu_03", "grep", {"pattern": "round("}, model="claude-haiku-4.5", agent="sa-explore")
    e.done(11, "toolu_03", "src/totals.py:2\nsrc/tax.py:7", agent="sa-explore")
    duck = {"agent_type": "rubber-duck", "description": "Check float math", "prompt": "Is summing floats the bug?"}
    e.call(12, "toolu_04", "task", duck, model="claude-haiku-4.5", agent="sa-explore")
    e.add(13, "subagent.started", {"toolCallId": "toolu_04", "agentName": "rubber-duck",
                                   "agentDisplayName": "Rubber Duck", "agentDescription": "A critic",
                                   "parentId": "sa-explore"}, "sa-duck")
    e.add(15, "assistant.message", {"messageId": "m-duck", "content": "Yes: floats lose the cent; sum Decimals.",
                                    "toolRequests": [], "model": "gpt-5-mini", "outputTokens": 40}, "sa-duck")
    e.done(16, "toolu_04", "Yes: floats lose the cent; sum Decimals.", agent="sa-explore")
    e.add(16, "subagent.completed", {"toolCallId": "toolu_04", "agentName": "rubber-duck",
                                     "agentDisplayName": "Rubber Duck", "totalToolCalls": 0, "durationMs": 3000},
          "sa-duck")
    e.add(18, "assistant.message", {"messageId": "m-explore", "content": "Totals round in src/totals.py after "
                                    "summing floats; the duck agrees floats lose the cent.", "toolRequests": [],
                                    "model": "claude-haiku-4.5", "outputTokens": 55}, "sa-explore")
    e.done(19, "toolu_02", "Totals round in src/totals.py after summing floats; the duck agrees floats lose the cent.")
    e.add(19, "subagent.completed", {"toolCallId": "toolu_02", "agentName": "explore",
                                     "agentDisplayName": "Explore Agent", "totalToolCalls": 2, "totalTokens": 9100,
                                     "durationMs": 11000}, "sa-explore")
    plan = {"agent_type": "general-purpose", "description": "Write the fix", "prompt": "Change total() to Decimal"}
    e.call(20, "toolu_05", "task", plan, tokens=30)
    e.add(21, "subagent.started", {"toolCallId": "toolu_05", "agentName": "general-purpose",
                                   "agentDisplayName": "General Purpose Agent", "agentDescription": "Does the work"})
    e.add(22, "assistant.message", {"messageId": "m-gp", "content": "Editing src/totals.py.", "toolRequests": [],
                                    "parentToolCallId": "toolu_05"})
    e.done(25, "toolu_05", "Sub-agent failed: model call failed (500)", success=False)
    e.add(25, "subagent.failed", {"toolCallId": "toolu_05", "agentName": "general-purpose",
                                  "agentDisplayName": "General Purpose Agent", "error": "model call failed (500)"})
    e.call(27, "toolu_06", "bash", {"command": "pytest tests/test_totals.py"}, tokens=25)
    e.done(29, "toolu_06", "1 failed: test_cent_rounding", success=False)
    e.add(31, "assistant.message", {"messageId": "m-end", "content": "Totals sum floats before rounding; use "
                                    "Decimal in total(). The fix agent failed, so nothing was changed.",
                                    "toolRequests": [], "model": "claude-sonnet-4.5", "outputTokens": 45})
    e.add(32, "assistant.turn_end", {"turnId": "0"})
    e.add(40, "session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": 3,
                                   "currentModel": "claude-sonnet-4.5", "modelMetrics": {
                                       "claude-sonnet-4.5": {"requests": {"count": 5, "cost": 5},
                                                             "usage": {"inputTokens": 26000, "outputTokens": 280}}}})
    return e


if __name__ == "__main__":
    folder = HERE / SESSION
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in session().lines))
    (folder / "workspace.yaml").write_text(f"id: {SESSION}\ncwd: {CWD}\nsummary: Checkout totals off by a cent\n")
