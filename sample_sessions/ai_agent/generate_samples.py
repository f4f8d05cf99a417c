"""Writes the ai-agent opTree snapshot samples (invented data in the shapes of seed 002 / FORMATS.md section 5).

Run: python3 sample_sessions/ai_agent/generate_samples.py
  4b9e-web-research.json.gz  a finished session ("final") with a sub-agent, parallel tool ops, a failed tool op
  7d21-stock-check.json      a mid-run snapshot ("subagent_finish"): nodes without endedAt are in progress
"""

import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
T0 = 1767261600000  # 2026-01-01T10:00:00Z in epoch ms


def acc(t, model, i, o, cost, latency, read=0):
    return {"type": "llm", "timestamp": T0 + t, "status": "ok", "latency": latency, "provider": "openrouter",
            "model": model, "tokens": {"inputTokens": i, "outputTokens": o, "cacheReadInputTokens": read,
                                       "cacheWriteInputTokens": 0, "totalTokens": i + o}, "costUsd": cost}


def log(t, severity, message, **extra):
    return {"timestamp": T0 + t, "severity": severity, "message": message, **extra}


def llm(op_id, t, model, text, tokens, reasoning=None, end=True):
    op = {"opId": op_id, "kind": "llm", "startedAt": T0 + t, "attributes": {"provider": "openrouter", "model": model},
          "logs": [log(t, "VRB", f"LLM request: {model}, 4 messages")],
          "accounting": [acc(t + 900, model, *tokens)],
          "request": {"kind": "llm", "payload": {"messages": 4}}}
    if reasoning:
        op["reasoning"] = {"chunks": [{"text": r, "ts": T0 + t + 10 * i} for i, r in enumerate(reasoning)], "final": ""}
        op["logs"].append(log(t + 5, "THK", "thinking…"))
    if end:
        op.update(endedAt=T0 + t + 900, status="ok", response={"payload": text, "truncated": False})
        op["logs"].append(log(t + 900, "VRB", "LLM response: 1 tool call" if not text else "LLM response: final answer"))
    return op


def tool(op_id, t, name, args, result, status="ok", end=True, truncated=False):
    op = {"opId": op_id, "kind": "tool", "startedAt": T0 + t, "attributes": {"name": name, "provider": "mcp"},
          "logs": [log(t, "VRB", f"-> {name}({json.dumps(args)})"),
                   log(t + 1, "TRC", "HTTP POST https://search.example/api\nAuthorization: Bearer sk-live-0123456789abcdefghij\n"
                                     "x-api-key: abcdef0123456789")],
          "accounting": [{"type": "tool", "timestamp": T0 + t + 300, "status": status, "latency": 300}],
          "request": {"kind": "tool", "payload": args}}
    if end:
        op.update(endedAt=T0 + t + 300, status=status, response={"payload": result, "truncated": truncated})
        op["logs"].append(log(t + 300, "ERR" if status == "failed" else "VRB", f"<- {name}: {status}"))
    return op


def final_session():
    child = {"id": "sess-child-1", "traceId": "tr-1", "agentId": "summarizer", "callPath": "web-research/summarizer",
             "sessionTitle": "Summarize findings", "startedAt": T0 + 5000, "endedAt": T0 + 9000, "success": True,
             "attributes": {}, "totals": {"tokensIn": 900, "tokensOut": 60, "tokensCacheRead": 0, "tokensCacheWrite": 0,
                                          "costUsd": 0.0011, "toolsRun": 0, "agentsRun": 0},
             "turns": [{"id": "t-c1", "index": 1, "startedAt": T0 + 5000, "endedAt": T0 + 9000,
                        "attributes": {"prompts": {"system": "You summarize search results.",
                                                   "user": "Summarize: Netdata is a monitoring agent; ai-agent is its agent runtime."}},
                        "ops": [llm("op-c1", 5100, "anthropic/claude-haiku-4-5",
                                    "Netdata monitors systems; ai-agent runs its AI agents.", (900, 60, 0.0011, 800))]}]}
    root = {"id": "sess-root", "traceId": "tr-1", "agentId": "web-research", "callPath": "web-research",
            "sessionTitle": "What is netdata ai-agent?", "startedAt": T0, "endedAt": T0 + 12000, "success": True,
            "error": None, "attributes": {},
            "totals": {"tokensIn": 4100, "tokensOut": 240, "tokensCacheRead": 1500, "tokensCacheWrite": 0,
                       "costUsd": 0.0213, "toolsRun": 3, "agentsRun": 1},
            "turns": [
                {"id": "t0", "index": 0, "startedAt": T0, "endedAt": T0 + 10,
                 "attributes": {"prompts": {"system": "You are a research agent. Use tools, then answer."}}, "ops": []},
                {"id": "t1", "index": 1, "startedAt": T0 + 10, "endedAt": T0 + 4000,
                 "attributes": {"prompts": {"user": "What is netdata ai-agent?"}},
                 "ops": [llm("op-1", 20, "anthropic/claude-sonnet-4-5", "", (1500, 80, 0.009, 880, 1500),
                             reasoning=["I should search ", "the web and the docs in parallel."]),
                         tool("op-2", 1000, "web_search", {"query": "netdata ai-agent"},
                              {"results": ["ai-agent: an agent runtime by Netdata"]}),
                         tool("op-3", 1000, "fetch_docs", {"url": "https://docs.example/ai-agent"},
                              "HTTP 503 Service Unavailable", status="failed")]},
                {"id": "t2", "index": 2, "startedAt": T0 + 4000, "endedAt": T0 + 12000,
                 "attributes": {"prompts": {}},
                 "ops": [{"opId": "op-4", "kind": "session", "startedAt": T0 + 4100, "endedAt": T0 + 9100, "status": "ok",
                          "attributes": {"name": "agent__summarizer", "provider": "subagent"}, "logs": [], "accounting": [],
                          "request": {"kind": "agent", "payload": "Summarize: Netdata is a monitoring agent; ai-agent is its agent runtime."},
                          "response": {"payload": "Netdata monitors systems; ai-agent runs its AI agents.", "truncated": False},
                          "childSession": child},
                         llm("op-5", 9200, "anthropic/claude-sonnet-4-5",
                             "ai-agent is Netdata's runtime for AI agents; Netdata itself monitors systems.",
                             (1700, 100, 0.0112, 1200))]}]}
    payload = {"version": 1, "reason": "final", "opTree": root}
    with open(HERE / "4b9e-web-research.json.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(payload).encode())  # mtime=0: the same bytes on every run


def unfinished_session():
    child = {"id": "sess-child-2", "traceId": "tr-2", "agentId": "price-lookup", "callPath": "stock-check/price-lookup",
             "startedAt": T0 + 3000, "turns": []}  # a stub: the child has not reported a turn yet
    root = {"id": "sess-stock", "traceId": "tr-2", "agentId": "stock-check", "callPath": "stock-check",
            "sessionTitle": "Check stock levels", "startedAt": T0, "success": None, "attributes": {},
            "totals": {"tokensIn": 800, "tokensOut": 40, "tokensCacheRead": 0, "tokensCacheWrite": 0,
                       "costUsd": 0.004, "toolsRun": 1, "agentsRun": 1},
            "turns": [{"id": "s1", "index": 1, "startedAt": T0 + 10,
                       "attributes": {"prompts": {"system": "You check stock.", "user": "How many widgets are left?"}},
                       "ops": [llm("op-s1", 20, "openai/gpt-5-mini", "", (800, 40, 0.004, 700)),
                               tool("op-s2", 1000, "inventory_query", {"sku": "W-1"}, {"count": 17}),
                               {"opId": "op-s3", "kind": "session", "startedAt": T0 + 3000,
                                "attributes": {"name": "agent__price_lookup"}, "logs": [], "accounting": [],
                                "request": {"kind": "agent", "payload": "Price of W-1?"}, "childSession": child}]}]}
    (HERE / "7d21-stock-check.json").write_text(json.dumps({"version": 1, "reason": "subagent_finish", "opTree": root},
                                                           indent=1))


if __name__ == "__main__":
    final_session()
    unfinished_session()
