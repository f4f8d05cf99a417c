#!/usr/bin/env python3
"""Generate ``research_team.jsonl``: a sample session in the native log format.

The native format is the event stream of seeds/000 (``agent_created``,
``transcript_entry`` and ``piece_of_text`` events linked by ``cause``,
``substance`` and ``tool_call_id``).  The story: a Coordinator runs a small
research team that writes a short report on "caching strategies for LLM agent
tool calls".

What the session exercises, for the viewer:

* an agent tree four levels deep: Coordinator -> Researcher -> Scout ->
  PaperReader, plus Writer -> Inner (the Writer's inner voice), Critic and a
  policy hook agent (PolicyHook);
* ``discuss`` broadcasts (piece_of_text -> each speaker; every utterance ->
  the caller as a tool result and to the other speakers as "[Name]: ...");
* ``whisper`` deliveries to exactly one agent (one plain, one formatted);
* a hook that rewrites a delivery (a leaked key becomes "[REDACTED]") and a
  hook that blocks tool calls (Example 3 of the seed);
* an inner monologue in the exact shape of the seed's Example 2;
* ordinary tools (web_search, fetch_url, read_file, write_file, run_python),
  an assistant message with two tool calls, error results, and one tool
  call whose ``arguments`` string is not valid JSON;
* long markdown contents and text that must be HTML-escaped;
* a piece_of_text whose ``cause`` is a list of two message ids.

Deterministic and stdlib-only: run ``python3 generate_research_team.py`` and
it (re)writes ``research_team.jsonl`` next to this file.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

OUT = Path(__file__).resolve().parent / "research_team.jsonl"

SONNET = "anthropic/claude-sonnet-4-5-20250929"
HAIKU = "anthropic/claude-haiku-4-5-20251001"

SECRET = "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"
REDACTED = "[REDACTED]"


# ---------------------------------------------------------------------------
# The log
# ---------------------------------------------------------------------------


class Log:
    """Allocates message ids / tool call ids and appends events in time order."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.agents: dict[str, str] = {}  # agent name -> agent_id
        self._counter = 0
        self._rng = random.Random(7)

    # -- ids ---------------------------------------------------------------
    def next_message_id(self) -> str:
        self._counter += 1
        return f"msg_{self._counter:03d}"  # msg_001 ... msg_999, msg_1000 ...

    def call_id(self) -> str:
        alphabet = string.ascii_letters + string.digits
        return "call_" + "".join(self._rng.choice(alphabet) for _ in range(24))

    def aid(self, name: str) -> str:
        return self.agents[name]

    # -- events ------------------------------------------------------------
    def _emit(self, event_type: str, agent_id: str, **fields) -> str:
        fields = {k: v for k, v in fields.items() if v is not None}
        assert not ("cause" in fields and "substance" in fields), fields
        mid = self.next_message_id()
        event = {"message_id": mid, "event_type": event_type, "agent_id": agent_id}
        event.update(fields)
        self.events.append(event)
        return mid

    def agent_created(self, agent_id: str, name: str, language_model: str,
                      cause: str | None = None) -> str:
        self.agents[name] = agent_id
        return self._emit("agent_created", agent_id, cause=cause, name=name,
                          language_model=language_model)

    def entry(self, agent_id: str, role: str, content: str | None = None, *,
              substance: str | None = None, tool_calls: list | None = None,
              tool_call_id: str | None = None, name: str | None = None) -> str:
        return self._emit("transcript_entry", agent_id, role=role, content=content,
                          tool_calls=tool_calls, tool_call_id=tool_call_id,
                          name=name, substance=substance)

    def piece_of_text(self, agent_id: str, content: str, cause) -> str:
        return self._emit("piece_of_text", agent_id, content=content, cause=cause)

    # -- output ------------------------------------------------------------
    def write(self, path: Path) -> None:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for event in self.events:
                fh.write(json.dumps(event, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------
# Tool helpers (mirroring the seed's tools)
# ---------------------------------------------------------------------------


def fn_call(log: Log, name: str, args) -> dict:
    """One entry of an assistant message's ``tool_calls``.

    ``args`` is a dict (serialised to a JSON string) or, to reproduce a model
    glitch, an already-made string that need not be valid JSON.
    """
    raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return {"id": log.call_id(), "type": "function",
            "function": {"name": name, "arguments": raw}}


def invoke(log: Log, agent: str, calls: list[dict], content: str | None = None) -> str:
    """The agent's assistant message carrying one or more tool calls."""
    return log.entry(log.aid(agent), "assistant", content, tool_calls=calls)


def result(log: Log, agent: str, call: dict, output: str) -> str:
    """A ``role: tool`` entry answering ``call`` in ``agent``'s transcript."""
    return log.entry(log.aid(agent), "tool", output, tool_call_id=call["id"],
                     name=call["function"]["name"])


def say(log: Log, agent: str, text: str) -> str:
    """An utterance: assistant content, no tool calls."""
    return log.entry(log.aid(agent), "assistant", text)


def hear(log: Log, agent: str, text: str, substance: str | None = None) -> str:
    """A user message in ``agent``'s transcript (external if no substance)."""
    return log.entry(log.aid(agent), "user", text, substance=substance)


def fmt(speaker: str, text: str) -> str:
    return f"[{speaker}]: {text}"


def tool(log: Log, agent: str, name: str, args, output: str,
         content: str | None = None) -> str:
    """A single ordinary tool call followed by its result; returns the call's id."""
    call = fn_call(log, name, args)
    mid = invoke(log, agent, [call], content)
    result(log, agent, call, output)
    return mid


def tools(log: Log, agent: str, specs: list[tuple], content: str | None = None) -> str:
    """Several tool calls in ONE assistant message, then their results in order."""
    calls = [fn_call(log, name, args) for name, args, _ in specs]
    mid = invoke(log, agent, calls, content)
    for call, (_, _, output) in zip(calls, specs):
        result(log, agent, call, output)
    return mid


def blocked_tool(log: Log, agent: str, name: str, args, hook: str,
                 request: str, verdict: str, reason: str) -> str:
    """A tool call vetoed by a hook agent (seed Example 3)."""
    call = fn_call(log, name, args)
    mid = invoke(log, agent, [call])
    hear(log, hook, request)
    say(log, hook, verdict)
    result(log, agent, call, f"Error: Action blocked by hook '{hook}': {reason}")
    return mid


def task(log: Log, parent: str, name: str, agent_id: str, system_prompt: str,
         language_model: str, content: str | None = None, **extra) -> str:
    """Create a sub-agent (seed Example 1): call, agent_created, system, result."""
    args = {"name": name, "system_prompt": system_prompt, **extra}
    call = fn_call(log, "task", args)
    mid = invoke(log, parent, [call], content)
    log.agent_created(agent_id, name, language_model, cause=mid)
    log.entry(agent_id, "system", system_prompt)
    result(log, parent, call, f"Created subagent: {name}")
    return agent_id


class Discussion:
    """An open ``discuss`` tool call; ``speak`` records one speaker's turn."""

    def __init__(self, log: Log, caller: str, call: dict, call_mid: str,
                 prompt_mid: str, speakers: list[str]) -> None:
        self.log, self.caller, self.call = log, caller, call
        self.call_mid, self.prompt_mid, self.speakers = call_mid, prompt_mid, speakers

    def speak(self, speaker: str, text: str, hook=None) -> str:
        """The speaker's utterance, the caller's tool result, and a formatted
        "[Name]: ..." delivery to every other speaker (substance = utterance).

        ``hook(utterance_mid, text) -> text`` may rewrite what is delivered.
        """
        mid = say(self.log, speaker, text)
        delivered = hook(mid, text) if hook else text
        result(self.log, self.caller, self.call, delivered)
        for other in self.speakers:
            if other != speaker:
                hear(self.log, other, fmt(speaker, delivered), substance=mid)
        return mid


def discuss(log: Log, caller: str, prompt: str, speakers: list[str],
            content: str | None = None) -> Discussion:
    """Broadcast ``prompt`` (a piece_of_text) to each speaker; returns the
    open discussion so the story can record the speakers' turns."""
    call = fn_call(log, "discuss", {"prompt": prompt, "speakers": speakers})
    call_mid = invoke(log, caller, [call], content)
    prompt_mid = log.piece_of_text(log.aid(caller), prompt, cause=call_mid)
    for speaker in speakers:
        hear(log, speaker, prompt, substance=prompt_mid)
    return Discussion(log, caller, call, call_mid, prompt_mid, speakers)


def whisper(log: Log, sender: str, to: str, message: str,
            formatted: bool = False, content: str | None = None) -> str:
    """Deliver ``message`` to exactly one agent.  Returns the piece_of_text id."""
    call = fn_call(log, "whisper", {"to": to, "message": message})
    call_mid = invoke(log, sender, [call], content)
    pot = log.piece_of_text(log.aid(sender), message, cause=call_mid)
    delivered = f"[{sender}, privately]: {message}" if formatted else message
    hear(log, to, delivered, substance=pot)
    result(log, sender, call, f"Whispered to {to}.")
    return pot


def compile_brief(log: Log, caller: str, to: str, sources: list[str],
                  brief: str, instructions: str) -> str:
    """A tool that compiles several messages into one text (cause = a list)."""
    call = fn_call(log, "compile_brief",
                   {"sources": sources, "deliver_to": to, "instructions": instructions})
    invoke(log, caller, [call])
    pot = log.piece_of_text(log.aid(caller), brief, cause=list(sources))
    hear(log, to, brief, substance=pot)
    result(log, caller, call,
           f"Compiled {len(sources)} messages into a {len(brief)}-character brief; delivered to {to}.")
    return pot


def secret_redactor(log: Log, hook: str, sender: str, recipients: list[str]):
    """A delivery hook: the hook agent is consulted and the secret is masked."""

    def apply(utterance_mid: str, text: str) -> str:
        if SECRET not in text:
            return text
        hear(log, hook,
             f"Outbound message {utterance_mid} from {sender} to {', '.join(recipients)} "
             "matched the secret scanner (pattern: sk-live-[A-Za-z0-9]{24,}). "
             f"Message:\n\n{text}\n\nREDACT or PASS?")
        say(log, hook,
            "REDACT. The span after `api_key=` is a live Stripe-style secret key; "
            f"replace it with {REDACTED} in every delivery. Recommend the sender rotate it.")
        return text.replace(SECRET, REDACTED)

    return apply


# ---------------------------------------------------------------------------
# Long texts used by the story
# ---------------------------------------------------------------------------

USER_REQUEST = (
    "Please put together a short report (~900 words) on caching strategies for LLM agent "
    "tool calls. Audience: the platform team that runs our agent fleet. I want concrete "
    "recommendations, our own benchmark numbers from bench/ where they exist, and an honest "
    "section on risks. Save it to report/caching_strategies.md."
)

SEARCH_ANTHROPIC = """1. Prompt caching - Anthropic docs
   https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
   Mark a prefix with cache_control; cache writes cost 25% more than base input tokens, cache reads cost 10% of base. Default lifetime 5 minutes, refreshed on every hit; a 1-hour TTL is available at a higher write price.
2. Prompt caching with tools - Anthropic docs
   https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#caching-tool-definitions
   Tool definitions, system prompt and messages are cached as a prefix in that order; changing a tool definition invalidates everything after it.
3. "Cut our agent bill in half with cache_control" - engineering blog (example.com)
   https://blog.example.com/agents/cache-control-half-price
   Case study: stable system prompt + 40 tool schemas = 9k tokens re-sent on every turn."""

SEARCH_OPENAI = """1. Prompt caching - OpenAI platform docs
   https://platform.openai.com/docs/guides/prompt-caching
   Automatic for prompts of 1,024 tokens or more, matched in 128-token increments; no code changes. Caches are usually cleared after 5-10 minutes of inactivity.
2. Structuring prompts for cache hits - OpenAI cookbook
   https://cookbook.openai.com/examples/prompt_caching101
   Put static content (instructions, tool schemas, examples) first and variable content last.
3. Forum thread: "cached_tokens always 0 with function calling?"
   https://community.example.com/t/cached-tokens-zero/8812
   Resolved: tool list order was being shuffled per request."""

SEARCH_MEMO = """1. GPTCache - semantic cache for LLM queries (GitHub)
   https://github.com/zilliztech/GPTCache
   Embedding-similarity cache in front of LLM calls; configurable similarity evaluation and eviction.
2. "Memoizing tool calls in agent loops" - example.org engineering notes
   https://example.org/notes/memoizing-tool-calls
   Key on (tool, version, canonical args); never cache tools with side effects; invalidate read caches on writes to the same resource.
3. "Tool Memoization for LLM Agents" (preprint PDF)
   https://example.org/papers/tool-memo.pdf
   Measures repeat rates of tool calls across 4 agent workloads; discusses staleness.
4. Internal: cache design page
   http://10.0.3.17/wiki/agent-cache-design
   (intranet)"""

PAPER_TEXT = """Tool Memoization for LLM Agents (preprint, 14 pages)

Abstract. Tool-using agents re-issue identical or near-identical tool calls within and across tasks. We instrument four workloads (code assistant, customer support, data analysis, web research) and measure repetition, cacheability and staleness of tool results...

Section 3 (Repetition). Exact-duplicate tool calls (same tool, canonicalised arguments) account for 21% (web research) to 47% (code assistant) of all calls. Most duplicates occur within the same task (73%), typically after the agent "re-checks" a file or a search it already ran.

Section 4 (Cacheability). We classify tools as pure (read_file, docs lookup), time-sensitive (search, prices, tickets) and effectful (write, send, execute). Effectful calls are 9-18% of calls and must never be served from cache.

Section 5 (Staleness). With a fixed 10-minute TTL, 1.9% of cache hits for time-sensitive tools returned results that differed from a fresh call; for pure tools staleness was 0.3%, almost entirely files modified by the agent itself without invalidation.

Section 6 (Semantic matching). Embedding-similarity matching at cosine 0.90 raised hit rates by 9-14 points but 3.1% of semantic hits were wrong for the new arguments (e.g. a different file path or date range).

Section 7 (Limitations). Workloads are from one organisation; latency effects depend heavily on the tool mix."""

PAPER_NOTES = """Extracted from "Tool Memoization for LLM Agents" (example.org preprint):

Claims & numbers (with conditions):
- Exact-duplicate tool calls: 21% (web research) to 47% (code assistant) of all calls; 4 workloads, one organisation.
- 73% of duplicates happen *within the same task* (agent re-checks a file or repeats a search).
- Effectful calls (write/send/execute): 9-18% of calls; must never be cached.
- Staleness with a fixed 10-minute TTL: 1.9% of hits on time-sensitive tools differed from a fresh call; 0.3% on pure tools.
- The 0.3% for pure tools is "almost entirely" files the agent itself modified without invalidation.
- Semantic matching at cosine 0.90: +9 to +14 points of hit rate, but 3.1% of semantic hits were wrong for the new arguments (different path or date range).

Caveats stated by the authors:
- Single-organisation workloads.
- Latency gains depend on tool mix; no cost numbers reported.

Not in the paper (do not attribute to it): anything about provider-side prompt caching."""

SCOUT_SUMMARY = """Summary for Researcher:

- Memoization pattern (example.org/notes/memoizing-tool-calls): key = (tool, tool version, canonical JSON args); cache only read-only tools; invalidate on writes to the same resource.
- Preprint (example.org/papers/tool-memo.pdf), via PaperReader: 21-47% of tool calls are exact repeats; 73% of repeats are within one task; semantic matching adds 9-14 pts of hit rate but 3.1% of semantic hits are wrong; fixed 10-min TTL -> 1.9% stale hits on time-sensitive tools.
- GPTCache (github.com/zilliztech/GPTCache): semantic cache aimed at LLM *prompts*; nothing tool-specific in the README, you'd have to wrap tools yourself.
- Could not open the intranet cache design page: the policy hook blocked 10.0.3.17 (private address). Someone with access should check it by hand.
- My first search failed because I sent malformed arguments; the retry worked."""

RESULTS_CSV = """scenario,tool,calls,cache,hit_rate,p50_ms,p95_ms,cost_usd_per_1k_tasks,stale_or_wrong
baseline,all,18420,off,0.00,1840,5210,41.70,0.000
exact_memo,all,18420,on,0.38,1190,4020,33.10,0.001
exact_memo+prompt_cache,all,18420,on,0.38,940,3310,19.80,0.001
semantic_0.92,all,18420,on,0.51,1020,3890,30.60,0.027
exact_memo,read_file,7312,on,0.61,210,640,,0.002
exact_memo,web_search,4105,on,0.22,2210,6020,,0.004
exact_memo,sql_query,3388,on,0.44,380,1450,,0.000
exact_memo,http_get,3615,on,0.18,1630,4870,,0.003"""

CONFIG_ENV = f"""# bench/config.env - replay benchmark settings (staging)
REPLAY_SOURCE=support-queue-2025-09
REPLAY_TASKS=1200
CACHE_BACKEND=redis
CACHE_TTL_S=300
CACHE_MAX_ENTRIES=200000
SEMANTIC_THRESHOLD=0.92
INVALIDATE_ON_WRITE=true   # added in run 2, see bench/CHANGELOG
api_key={SECRET}"""

RESEARCH_NOTES = """Research notes - caching for LLM agent tool calls

## 1. Provider-side prompt caching (not tool results, but the biggest cost lever)
- Anthropic: explicit `cache_control` breakpoints; cache reads billed at 10% of base input price, writes at 125%; 5-minute default TTL refreshed on each hit (docs.anthropic.com/.../prompt-caching). Tool definitions are part of the cached prefix, so *changing or reordering tools invalidates the cache*.
- OpenAI: automatic for prompts >= 1,024 tokens, 128-token increments; caches cleared after 5-10 min idle (platform.openai.com/docs/guides/prompt-caching). Same lesson: static content first, and keep the tool list order stable.

## 2. Client-side memoization of tool results
- Standard pattern: key = (tool name, tool version, canonical JSON of args); only for read-only tools; invalidate reads when a write touches the same resource (example.org notes).
- Preprint (via Scout/PaperReader): 21-47% of tool calls are exact repeats, 73% of those within the same task. Fixed 10-min TTL gave 1.9% stale hits for time-sensitive tools, 0.3% for pure tools (mostly self-modified files without invalidation).

## 3. Semantic caching
- GPTCache-style similarity matching targets prompts; for tools it is risky: preprint reports 3.1% wrong semantic hits (different path/date range).

## 4. Our numbers (bench/results.csv, 1,200 replayed support-queue tasks, 18,420 tool calls)
| scenario | hit rate | p50 | p95 | $/1k tasks | stale/wrong |
|---|---|---|---|---|---|
| baseline | 0% | 1,840 ms | 5,210 ms | 41.70 | 0.0% |
| exact memo | 38% | 1,190 ms | 4,020 ms | 33.10 | 0.1% |
| exact memo + prompt cache | 38% | 940 ms | 3,310 ms | 19.80 | 0.1% |
| semantic @0.92 | 51% | 1,020 ms | 3,890 ms | 30.60 | 2.7% |
Per tool (exact memo): read_file 61%, sql_query 44%, web_search 22%, http_get 18%.

## Open questions
- Was INVALIDATE_ON_WRITE on for the exact_memo run? config.env says it was "added in run 2".
- Intranet design page (10.0.3.17) was blocked for Scout; needs a human to check."""

DRAFT_V1 = """# Caching Strategies for LLM Agent Tool Calls (draft v1)

**TL;DR - three recommendations**
1. **Memoize read-only tool calls on an exact, canonical key** (tool name + tool version + canonical JSON arguments). On our support-queue replay this cut p50 latency from 1,840 ms to 1,190 ms (-35%).
2. **Turn on provider prompt caching** for the stable prefix (system prompt + tool schemas). Together with (1) it cut cost per 1k tasks from $41.70 to $19.80 (-53%).
3. **Do not use semantic (similarity) caching for tool results.** It raised the hit rate to 51% but returned a stale or wrong result 2.7% of the time.

## Why cache at all
Agent loops repeat themselves: in our replay 38% of 18,420 tool calls were exact repeats, and published measurements put the range at 21-47% depending on workload. Most repeats happen inside a single task, when the agent "re-checks" a file or a search it already ran.

## What is safe to cache
| Tool class | Examples | Cache? | TTL |
|---|---|---|---|
| Pure / read-only | read_file, docs lookup | yes | until invalidated |
| Time-sensitive | web_search, ticket status | yes, short | 5-15 min |
| Effectful | write_file, send_email, SQL UPDATE | never | - |

read_file reaches hit rates of 60%+ on our workload, web_search about 22%.

## Cache keys
```python
def cache_key(tool, args):
    canon = json.dumps(args, sort_keys=True, separators=(",", ":"))
    return f"{tool.name}:{tool.version}:{sha256(canon.encode()).hexdigest()}"
```
Include the tool version so a schema change cannot serve old results.

## Invalidation
When a write tool touches a resource (a path, a row, a ticket), drop every cached read of that resource. Without this, the agent reads back its *old* file after editing it - the main source of staleness for pure tools.

## Observability
A small dashboard lists recent cache entries:
```js
row.innerHTML = "<td>" + entry.tool + "</td><td>" + entry.result_preview + "</td>";
```
Track hit rate per tool, stale-hit rate (sampled re-execution) and bytes cached.

## Risks
- Stale answers for time-sensitive tools; keep TTLs short and sample-verify.
- Prompt-cache misses when tool order changes between requests.
- Cached results can outlive permissions; scope keys appropriately.
"""

CRITIC_REVIEW = """Review of report/draft_v1.md - security first, then numbers, then code.

**1. Security (blocker): the dashboard snippet is an XSS hole.**
`row.innerHTML = "<td>" + entry.tool + "</td><td>" + entry.result_preview + "</td>";`
`result_preview` is tool output, and tool output is attacker-influenced (web pages, tickets, files). A fetched page containing `<script>alert(1)</script>` won't run via innerHTML, but `<img src=x onerror="alert(document.cookie)">` will. Either build cells with `textContent`, or escape `&`, `<`, `>`, `"` and `'` (in that order: `&` first, or you double-escape). Publishing this in a report means someone will copy it.

**2. Security: cache scope.** "Scope keys appropriately" is too vague. For sql_query with row-level security, user A's result must never be served to user B. Say it: the key includes tenant + principal for any tool whose output depends on who asks.

**3. Numbers.** "read_file reaches hit rates of 60%+" - results.csv has 0.61 only for the exact_memo row, and config.env says INVALIDATE_ON_WRITE was "added in run 2". If that run predates the fix, 0.61 is inflated by stale hits. Need confirmation before we print it.

**4. Numbers.** The TTL table recommends 5-15 min for web_search, but the bench used CACHE_TTL_S=300 for *everything*. Fine to recommend, but say the benchmark used 5 min flat.

**5. Code.** `json.dumps(sort_keys=True)` canonicalises key order only: `"./a.txt"` vs `"a.txt"`, or omitted default args, still produce different keys. That's a missed hit, not a wrong hit, so it's safe - say so in one line.

Everything else (TL;DR placement, the "never cache effectful tools" rule) is good. Fix 1 and 3 and I'm happy."""

FINAL_REPORT = """# Caching Strategies for LLM Agent Tool Calls

**Three recommendations**
1. **Memoize read-only tool calls on an exact, canonical key** - tool name + tool version + canonical JSON arguments + (where results depend on the caller) tenant and principal. On our support-queue replay (1,200 tasks, 18,420 tool calls) this cut p50 latency from 1,840 ms to 1,190 ms (-35%) and cost per 1k tasks from $41.70 to $33.10 (-21%).
2. **Turn on provider prompt caching for the stable prefix** (system prompt + tool schemas, in a fixed order). Combined with (1): $19.80 per 1k tasks (-53%) and p50 940 ms.
3. **Do not use semantic (similarity) caching for tool results.** It raised the hit rate from 38% to 51%, but 2.7% of results were stale or wrong (a published study: 3.1% wrong semantic hits). For tools, a near match is a different question. Possible exception: free-text docs lookup, scoped per user, with an exact check on structured fields.

## Why cache at all
Agents repeat themselves: 38% of the tool calls in our replay were exact repeats (21-47% in a published study), mostly inside one task when the agent re-checks a file or search. Separately, every turn re-sends the same system prompt and tool schemas - exactly what provider prompt caching discounts.

## What is safe to cache
| Tool class | Examples | Cache? | Suggested TTL |
|---|---|---|---|
| Pure / read-only | read_file, docs lookup | yes | until invalidated |
| Time-sensitive | web_search | yes | 5-15 min |
| Volatile | ticket status, prices | maybe | 1-2 min |
| Effectful | write_file, send_email, SQL UPDATE | never | - |

Our TTL sweep for web_search: stale results rise from 0.4% at 5 min to 1.2% at 15 min. On our replay (run with INVALIDATE_ON_WRITE enabled and a flat 5-minute TTL for all tools) hit rates were 54% for read_file, 44% for sql_query, 22% for web_search and 18% for http_get.

## Cache keys
```python
def cache_key(tool, args, scope):
    canon = json.dumps(args, sort_keys=True, separators=(",", ":"))
    raw = f"{tool.name}:{tool.version}:{scope}:{canon}"
    return hashlib.sha256(raw.encode()).hexdigest()
```
`sort_keys` normalises key order only; "./a.txt" and "a.txt" still miss each other. That costs hits, never correctness.

## Invalidation
When a write tool touches a resource (path, row, ticket), drop every cached read of it. Without this the agent reads back its *old* file after editing it - the main source of staleness for pure tools.

## Observability
Track hit rate per tool, stale-hit rate (re-execute 1% of hits) and bytes cached. Render cached results as untrusted text (`textContent`, never `innerHTML`).

## Risks
- **Staleness** for time-sensitive tools: keep TTLs short and sample-verify.
- **Prompt-cache misses** when tool definitions change or are reordered between requests.
- **Cross-user leakage** if keys omit tenant/principal for permission-dependent tools.
- **Secrets in arguments** end up in cache keys and logs; hash keys and redact values.
"""


# ---------------------------------------------------------------------------
# The story
# ---------------------------------------------------------------------------


def setup_team(log: Log) -> None:
    log.agent_created("agent_root", "Coordinator", SONNET)
    log.entry("agent_root", "system",
              "You are the Coordinator of a small research team. Create the helpers you need with "
              "the task tool, talk to them with discuss and whisper, and deliver the final report "
              "to the user.")
    hear(log, "Coordinator", USER_REQUEST)

    task(log, "Coordinator", "PolicyHook", "agent_policy_hook",
         "You are PolicyHook, a policy hook attached to this session. You are consulted (1) before "
         "any tool call that leaves the sandbox and (2) when an outbound inter-agent message matches "
         "the secret scanner. For tool calls answer APPROVE or DENY with a one-line reason; for "
         "messages answer REDACT or PASS. Never repeat a secret in your answer.",
         HAIKU,
         content="Before anything else I'll attach a policy hook: we'll be reading bench configs "
                 "and browsing, so I want secrets masked and private addresses blocked.",
         hook_events=["before_tool_call", "before_delivery"])
    task(log, "Coordinator", "Researcher", "agent_researcher",
         "You are the Researcher on a small report-writing team. Find primary sources and in-house "
         "benchmark data (bench/) on caching for LLM agent tool calls. Cite URLs. Distinguish "
         "measured numbers from vendor claims. You may spawn helpers with the task tool.",
         SONNET)
    task(log, "Coordinator", "Writer", "agent_writer",
         "You are the Writer. Turn the team's findings into a clear, ~900-word markdown report for "
         "platform engineers. Prefer concrete recommendations over surveys. You may keep an inner "
         "voice to think things through before you answer.",
         SONNET)
    task(log, "Coordinator", "Critic", "agent_critic",
         "You are the Critic. Review claims, numbers and code in the team's output. Be specific: "
         "quote the line, say what is wrong, propose a fix. Flag security problems first.",
         HAIKU)


def kickoff(log: Log) -> None:
    d = discuss(log, "Coordinator",
                "Kickoff. Topic: caching strategies for LLM agent tool calls. Plan: Researcher gathers "
                "sources and our bench numbers; Writer drafts ~900 words; Critic reviews claims and "
                "code samples. In two or three sentences each: what will you do first, and what do "
                "you need from the others?",
                ["Researcher", "Writer", "Critic"])
    d.speak("Researcher",
            "First I'll map the landscape: provider-side prompt caching (Anthropic, OpenAI), client-side "
            "memoization of tool results, and semantic caches like GPTCache. Then I'll pull our numbers "
            "from bench/. Writer, tell me early which sections you want so I don't over-collect.")
    d.speak("Writer",
            "I'll sketch an outline while Researcher digs: (1) why cache, (2) what is safe to cache, "
            "(3) strategies, (4) invalidation, (5) risks, (6) recommendations. Researcher - I mostly need "
            "hit rates and latency/cost deltas. Critic - tell me if the outline misses anything.")
    d.speak("Critic",
            "Two rules from me: every number gets a source (a bench file or a URL), and every code sample "
            "gets reviewed for correctness *and* safety before it goes in. The outline is missing a "
            "section on cache-key design - that's where most of the bugs live.")
    d.speak("Writer",
            "Fair point - adding \"Cache keys\" between strategies and invalidation. I'll keep the "
            "recommendations up top.")


def outline_round(log: Log) -> None:
    d = discuss(log, "Coordinator",
                "Writer and Critic: while the Researcher is out, agree on the outline and on what the "
                "report must NOT claim. Two short rounds, then stop.",
                ["Writer", "Critic"])
    d.speak("Writer",
            "Proposed outline: TL;DR with three recommendations -> Why cache -> What is safe to cache "
            "(table by tool class) -> Cache keys -> Invalidation -> Observability -> Risks. Target 900 words.")
    d.speak("Critic",
            "Good. Things we must not claim: (a) that prompt caching and tool-result caching are the same "
            "thing - they're separate layers; (b) any vendor's marketing numbers as if we measured them; "
            "(c) hit rates without the workload they came from.")
    d.speak("Writer",
            "Agreed on all three. I'll label every number with its source in the sentence, e.g. "
            "\"on our support-queue replay\" vs. \"a published study\".")
    d.speak("Critic",
            "Then one more: keep code samples minimal & runnable. A half-written snippet in a report "
            "gets copy-pasted into production. That's it from me.")


def research(log: Log) -> tuple[str, str]:
    """The Researcher's solo turn, with a sub-searcher and a reader under it."""
    d = discuss(log, "Coordinator",
                "Researcher: go gather sources. Priorities: (1) what providers' prompt caching actually does "
                "and costs, (2) patterns for memoizing tool results inside agent loops, (3) our own numbers "
                "in bench/. Report back with notes and links.",
                ["Researcher"])

    tools(log, "Researcher", [
        ("web_search", {"query": "Anthropic prompt caching cache_control pricing TTL", "max_results": 3},
         SEARCH_ANTHROPIC),
        ("web_search", {"query": "OpenAI prompt caching automatic 1024 tokens", "max_results": 3},
         SEARCH_OPENAI),
    ], content="Two independent searches on the provider side - running them in parallel.")

    task(log, "Researcher", "Scout", "agent_researcher_scout",
         "You are Scout, a fast search helper for the Researcher. Run searches, skim pages, and return "
         "short bullet summaries with URLs. Do not editorialize.",
         HAIKU,
         content="The tool-memoization side is broader; I'll hand it to a cheaper helper.")
    s = discuss(log, "Researcher",
                "Find write-ups on memoizing tool results inside agent loops: cache keys, TTLs, which tools "
                "are safe to cache, invalidation after writes. Also check whether semantic caching "
                "(GPTCache-style) is used for tool calls, not just prompts. Bullets + URLs.",
                ["Scout"])

    # A model glitch: the arguments string is truncated, so it is not valid JSON.
    bad_args = '{"query": "memoize tool calls LLM agent cache invalidation", "max_results": 8'
    try:
        json.loads(bad_args)
        parse_error = "unexpected success"
    except json.JSONDecodeError as exc:
        parse_error = str(exc)
    bad_call = tool(log, "Scout", "web_search", bad_args,
                    f"Error: could not parse arguments for web_search: {parse_error}")
    tool(log, "Scout", "web_search",
         {"query": "memoize tool calls LLM agent cache invalidation", "max_results": 8},
         SEARCH_MEMO)
    blocked_tool(log, "Scout", "fetch_url", {"url": "http://10.0.3.17/wiki/agent-cache-design"},
                 "PolicyHook",
                 "Agent 'agent_researcher_scout' (Scout) is attempting tool call fetch_url with "
                 "url='http://10.0.3.17/wiki/agent-cache-design'. Approve?",
                 "DENY. 10.0.3.17 is a private network address; web research tools may only reach "
                 "public hosts.",
                 "10.0.3.17 is a private network address; web research tools may only reach public hosts.")
    tool(log, "Scout", "fetch_url", {"url": "https://example.org/notes/memoizing-tool-calls"},
         "Memoizing tool calls in agent loops\n\nCache the *result* of a tool call under a key made of the "
         "tool name, the tool's version and the canonical JSON of its arguments. Only read-only tools are "
         "eligible. When a write tool touches a resource, invalidate every cached read of that resource - "
         "otherwise the agent reads back stale content it just changed. Do not cache errors such as "
         "timeouts or 429s; cache misses are cheap, cached failures are not.")

    task(log, "Scout", "PaperReader", "agent_scout_reader",
         "You are PaperReader. Read one long document and extract only: claims, numbers with their "
         "conditions, and caveats. Quote exact figures. No opinions.",
         HAIKU,
         content="The preprint is 14 pages; delegating the close read.")
    p = discuss(log, "Scout",
                "Read https://example.org/papers/tool-memo.pdf and extract every number about repeat rates, "
                "staleness and semantic matching, with the conditions under which it was measured.",
                ["PaperReader"])
    tool(log, "PaperReader", "fetch_url", {"url": "https://example.org/papers/tool-memo.pdf", "format": "text"},
         PAPER_TEXT)
    p.speak("PaperReader", PAPER_NOTES)

    tool(log, "Scout", "fetch_url", {"url": "https://github.com/zilliztech/GPTCache"},
         "GPTCache: A Library for Creating Semantic Cache for LLM Queries. Slash your LLM API costs by "
         "10x, boost speed by 100x (README claims). Modules: adapter, embedding, cache storage, vector "
         "store, similarity evaluator, eviction. Examples cover OpenAI chat completions, LangChain and "
         "image generation.")
    s.speak("Scout", SCOUT_SUMMARY)

    tools(log, "Researcher", [
        ("read_file", {"path": "bench/results.csv"}, RESULTS_CSV),
        ("read_file", {"path": "bench/config.env"}, CONFIG_ENV),
    ])
    tool(log, "Researcher", "read_file", {"path": "bench/CHANGELOG"},
         "Error: FileNotFoundError: [Errno 2] No such file or directory: 'bench/CHANGELOG'")
    tool(log, "Researcher", "run_python",
         {"code": "b, m, mp = 41.70, 33.10, 19.80\nprint(round((b-m)/b*100, 1), round((b-mp)/b*100, 1), "
                  "round((1840-1190)/1840*100, 1))"},
         "20.6 52.5 35.3")
    notes_mid = d.speak("Researcher", RESEARCH_NOTES)
    return notes_mid, bad_call


def bench_review(log: Log) -> tuple[str, str, str]:
    """Three-way discussion of the benchmark; the Researcher leaks a key."""
    speakers = ["Researcher", "Writer", "Critic"]
    d = discuss(log, "Coordinator",
                "Before we write anything about numbers: Researcher, walk us through how bench/results.csv was "
                "produced (config, workload, what counts as a hit). Critic, poke holes. Writer, say what you "
                "can and cannot claim from it.",
                speakers)
    redact = secret_redactor(log, "PolicyHook", "Researcher", ["Coordinator", "Writer", "Critic"])
    leak_text = (
        "The workload is 1,200 tasks replayed from last month's support queue - 18,420 tool calls in total. "
        "A \"hit\" is a tool call answered from cache without executing the tool. Here's the exact config "
        "from bench/config.env so you can check it:\n\n"
        "```\nREPLAY_SOURCE=support-queue-2025-09\nCACHE_BACKEND=redis\nCACHE_TTL_S=300\n"
        f"SEMANTIC_THRESHOLD=0.92\nINVALIDATE_ON_WRITE=true\napi_key={SECRET}\n```\n\n"
        "\"stale_or_wrong\" was measured by re-executing 5% of hits and diffing the results."
    )
    leak_mid = d.speak("Researcher", leak_text, hook=redact)
    critic_mid = d.speak("Critic",
            "Something in that config block was redacted before it reached me - if it was a live key, "
            "rotate it and scrub bench/config.env. On substance: (1) 1,200 tasks from one queue is a narrow "
            "workload, so every number needs \"on our support-queue replay\" next to it; (2) the 51% "
            "semantic hit rate comes with 2.7% stale-or-wrong results - that's the headline, not the hit "
            "rate; (3) was prompt caching on during the baseline? If yes, the cost deltas are understated.")
    d.speak("Writer",
            "What I can claim: exact memoization cut p50 by ~35% and cost by ~21%; adding prompt caching "
            "brings cost down ~53% overall - all \"on our replay\". What I won't claim: that semantic caching "
            "is a win; 2.7% wrong results is disqualifying for tools. Researcher, what did 5% re-execution "
            "mean for effectful tools - were they excluded?")
    d.speak("Researcher",
            "Yes, that was a live staging key; I've filed it for rotation and will strip it from config.env. "
            "Answers: prompt caching was OFF in baseline and exact_memo - only the \"+prompt_cache\" row has it "
            "on, so the deltas are clean. Effectful tools were never cached, hence never re-executed.")
    d.speak("Critic",
            "Then the comparison is fair. Remaining doubt is only read_file's 0.61 and whether "
            "INVALIDATE_ON_WRITE was on for that run - the comment says \"added in run 2\".")
    d.speak("Writer",
            "I'll mark the read_file figure as provisional in the draft until that's settled.")
    return leak_mid, critic_mid, d.call_mid


def semantic_debate(log: Log) -> None:
    """Is semantic caching acceptable for ANY tool class?  Three speakers, two rounds."""
    speakers = ["Researcher", "Writer", "Critic"]
    d = discuss(log, "Coordinator",
                "Recommendation #3 will get pushback, so let's stress-test it: is there ANY tool class where "
                "semantic (similarity) caching is acceptable? Researcher, bring evidence; Critic, look for "
                "failure modes; Writer, tell us how to phrase the outcome.",
                speakers)
    tool(log, "Researcher", "web_search",
         {"query": "semantic cache embedding similarity false positive rate tool arguments", "max_results": 4},
         "1. \"When near enough isn't: false hits in semantic caches\" - example.com blog\n"
         "   https://blog.example.com/semantic-cache-false-hits\n"
         "   Queries that differ only in a number, date or negation embed almost identically "
         "(\"orders since May 1\" vs \"orders since May 11\").\n"
         "2. GPTCache docs - similarity evaluation\n"
         "   https://gptcache.readthedocs.io/\n"
         "   Pluggable evaluators (distance, exact match, model-based) to post-filter candidates.")
    d.speak("Researcher",
            "Evidence says: only where a near-miss answer is harmless. Arguments that differ by a number, date "
            "or negation embed almost identically - \"orders since May 1\" vs \"since May 11\" - and that's "
            "exactly what tool arguments look like. The one plausible niche is free-text FAQ/docs lookup, where "
            "a neighbouring answer is still useful.")
    d.speak("Writer",
            "So the honest phrasing is: \"don't use semantic caching for tool results; the possible exception "
            "is free-text docs lookup, and only with an exact-match post-check on structured fields.\" One "
            "sentence, inside recommendation #3, not a new section.")
    d.speak("Critic",
            "Failure mode nobody mentioned: semantic caches can return *another user's* answer if the key "
            "space is shared - \"show my invoices\" from user A is a perfect match for user B. Scope applies "
            "here too. Otherwise I agree with the Writer's sentence.")
    d.speak("Researcher",
            "Agreed on scoping. For the record, our own 0.92 threshold run had 2.7% stale-or-wrong, and "
            "raising it to 0.97 in a side run brought hits back down to ~40% - barely above exact matching.")
    d.speak("Writer",
            "That last number is the clincher: at a safe threshold you lose most of the benefit. I'll mention it "
            "only if Critic is OK with citing a side run that isn't in results.csv.")
    d.speak("Critic",
            "Not OK - it's not in a file we can point to. Leave it out, or get it into bench/ first.")


def ttl_discussion(log: Log) -> None:
    """Researcher and Writer settle TTL guidance; the Critic is told to time-box."""
    speakers = ["Researcher", "Writer"]
    d = discuss(log, "Coordinator",
                "Researcher and Writer: agree on the TTL guidance for time-sensitive tools. The bench used 300 s "
                "for everything; what do we actually recommend?",
                speakers)
    tool(log, "Researcher", "read_file", {"path": "bench/ttl_sweep.csv"},
         "ttl_s,web_search_hit_rate,web_search_stale\n60,0.09,0.001\n300,0.22,0.004\n900,0.27,0.012\n"
         "3600,0.31,0.041")
    d.speak("Researcher",
            "There's a TTL sweep for web_search: 60 s -> 9% hits / 0.1% stale, 300 s -> 22% / 0.4%, "
            "900 s -> 27% / 1.2%, 3600 s -> 31% / 4.1%. The knee is between 5 and 15 minutes.")
    d.speak("Writer",
            "Then \"5-15 min\" in the table is supported by our own data, not just intuition. I'll add "
            "\"(our TTL sweep: stale results rise from 0.4% at 5 min to 1.2% at 15 min)\" under the table.")
    d.speak("Researcher",
            "Please also say tickets and prices need shorter TTLs than search - a ticket status changing "
            "under the agent is worse than a slightly old search result.")
    d.speak("Writer",
            "Will do: \"ticket/price lookups: 1-2 min or no cache\". That keeps the table honest.")
    whisper(log, "Coordinator", "Critic",
            "We're behind schedule: keep your next review to blockers plus at most three non-blocking notes.",
            content="Time-boxing the Critic privately; no need to broadcast schedule pressure.")


def brief_writer(log: Log, notes_mid: str, critic_mid: str) -> str:
    brief = (
        "Brief for Writer (compiled from the Researcher's notes and the Critic's review):\n"
        "- Lead with three recommendations: exact memoization of read-only tools; provider prompt caching "
        "for the stable prefix; no semantic caching for tool results.\n"
        "- Numbers you may use, always labelled \"on our support-queue replay (1,200 tasks)\": p50 1,840 -> "
        "1,190 ms (-35%); $/1k tasks 41.70 -> 33.10 (-21%) -> 19.80 with prompt caching (-53%); semantic "
        "@0.92: 51% hits, 2.7% stale or wrong.\n"
        "- External numbers (label as \"a published study\"): 21-47% of tool calls are exact repeats; 3.1% of "
        "semantic hits wrong.\n"
        "- Provisional: read_file hit rate 0.61 (invalidation status unclear).\n"
        "- Must include: cache-key design, invalidation on writes, never cache effectful tools.\n"
        "- Must not include: vendor marketing numbers; internal hostnames or keys."
    )
    return compile_brief(log, "Coordinator", "Writer", [notes_mid, critic_mid], brief,
                         "Bullet points, numbers with their sources, under 200 words.")


def draft(log: Log) -> str:
    d = discuss(log, "Coordinator",
                "Writer: please draft v1 of the report from the brief. Save it to report/draft_v1.md and "
                "tell us when it's ready.",
                ["Writer"])
    # Seed Example 2: the Writer creates its inner voice, then consults it.
    task(log, "Writer", "Inner", "agent_writer_inner",
         "You are the Writer's inner voice. You speak only to the Writer. Be blunt and brief: "
         "say what the reader needs, what to cut, and where the Writer is fooling itself.",
         SONNET)
    i = discuss(log, "Writer",
                "The brief has seven bullets and a 1,000-word cap. What should lead - the numbers or the "
                "recommendations?",
                ["Inner"])
    i.speak("Inner",
            "Lead with the recommendations; the platform lead skims. Put the number that justifies each "
            "recommendation right under it, not in a table up top. And make \"no semantic caching for tools\" "
            "recommendation #3 - it's the one people will argue with.")
    tool(log, "Writer", "read_file", {"path": "report/outline.md"},
         "Error: FileNotFoundError: [Errno 2] No such file or directory: 'report/outline.md'")
    i2 = discuss(log, "Writer",
                 "I want a code sample for cache keys and a tiny dashboard snippet for observability. "
                 "Too much?",
                 ["Inner"])
    i2.speak("Inner",
             "The cache-key sample earns its place - it's the whole idea in four lines. The dashboard "
             "snippet is decoration. Keep it if it's short, but you know the Critic will read every "
             "character of it.")
    tool(log, "Writer", "write_file", {"path": "report/draft_v1.md", "content": DRAFT_V1},
         f"Wrote {len(DRAFT_V1.encode('utf-8'))} bytes to report/draft_v1.md")
    return d.speak("Writer",
                   "Draft v1 is saved to report/draft_v1.md (about 360 words, so there's room for the risks "
                   "section to grow). TL;DR with the three recommendations is at the top; the read_file "
                   "hit rate is still the provisional 60%+ figure. Ready for review.")


def user_interjection(log: Log) -> None:
    # An external trigger (seed Example 4): a new user message mid-session.
    hear(log, "Coordinator",
         "Quick note from the platform lead: the report will be shared outside the team, so no internal "
         "hostnames, IPs or credentials in it - and please keep code samples safe to copy.")
    whisper(log, "Coordinator", "Writer",
            "Heads-up from the user: the report leaves the team. No internal hostnames, IPs or credentials, "
            "and code samples must be safe to copy-paste.",
            content="Passing this to the Writer only; the others don't need to act on it.")


def review(log: Log) -> tuple[str, str]:
    speakers = ["Critic", "Writer"]
    d = discuss(log, "Coordinator",
                "Critic: review report/draft_v1.md - claims, numbers, code. Writer: respond point by point.",
                speakers)
    tool(log, "Critic", "read_file", {"path": "report/draft_v1.md"}, DRAFT_V1)
    tool(log, "Critic", "run_python",
         {"code": "import json\nprint(json.dumps({'path': './a.txt'}, sort_keys=True) == "
                  "json.dumps({'path': 'a.txt'}, sort_keys=True))"},
         "False")
    whisper_pot = whisper(
        log, "Critic", "Researcher",
        "Quick private check before I say it in public: the draft claims read_file hits of \"60%+\". Was "
        "INVALIDATE_ON_WRITE on for the exact_memo run that produced 0.61? If not, that figure is inflated.",
        formatted=True)
    review_mid = d.speak("Critic", CRITIC_REVIEW)

    i = discuss(log, "Writer",
                "The Critic says the dashboard snippet is an XSS hole and the read_file number may be inflated. "
                "Fix the snippet or cut it?",
                ["Inner"])
    i.speak("Inner",
            "Cut it. You told yourself it was decoration - and it's the part that failed review. Replace it "
            "with one sentence: treat cached results as untrusted text. On the number: don't defend it, wait "
            "for the Researcher.")
    d.speak("Writer",
            "Thanks - all five accepted. (1) The innerHTML snippet goes; Observability will say \"render cached "
            "results with textContent, never innerHTML\". (2) Keys will include tenant + principal for "
            "permission-dependent tools, with the sql_query example. (3) read_file stays provisional until "
            "the Researcher confirms. (4) I'll state the 5-minute flat TTL. (5) One line on missed-vs-wrong hits.")
    d.speak("Critic",
            "Good. For (1), don't swap in a hand-rolled escape() either - people get the & ordering wrong. "
            "textContent is the whole fix.")
    d.speak("Writer", "Understood: textContent only, no escaping helper in the report.")
    return review_mid, whisper_pot


def verify_numbers(log: Log) -> None:
    speakers = ["Researcher", "Critic"]
    d = discuss(log, "Coordinator",
                "Researcher, Critic: settle the read_file hit-rate question and anything else numeric before "
                "the Writer produces v2. Researcher first.",
                speakers)
    s = discuss(log, "Researcher",
                "Find out whether bench runs before and after 'INVALIDATE_ON_WRITE' are both archived "
                "(bench/runs/), and search for guidance on stale-while-revalidate for tool caches.",
                ["Scout"])
    tool(log, "Scout", "web_search", {"query": "stale-while-revalidate tool result cache agent", "max_results": 5},
         "Error: 429 Too Many Requests - search quota exceeded, retry after 20s")
    tool(log, "Scout", "web_search", {"query": "stale-while-revalidate tool result cache agent", "max_results": 5},
         "1. RFC 5861 - HTTP Cache-Control Extensions for Stale Content\n   "
         "https://www.rfc-editor.org/rfc/rfc5861\n   Defines stale-while-revalidate and stale-if-error.\n"
         "2. \"Serving stale tool results while refreshing\" - example.org notes\n   "
         "https://example.org/notes/swr-for-tools\n   Works for dashboards; for agents, the model acts on the "
         "stale value before the refresh lands.")
    tool(log, "Scout", "list_dir", {"path": "bench/runs"},
         "run1_2025-09-12/  (INVALIDATE_ON_WRITE unset)\nrun2_2025-09-19/  (INVALIDATE_ON_WRITE=true)\n"
         "summary.csv -> run2_2025-09-19/results.csv")
    s.speak("Scout",
            "- bench/runs has two runs: run1 (2025-09-12) without INVALIDATE_ON_WRITE, run2 (2025-09-19) with "
            "it. bench/results.csv is a symlink to run2... but the read_file row may have been pasted from "
            "run1, you should diff them.\n"
            "- Stale-while-revalidate (RFC 5861) is a poor fit for agents: the model acts on the stale value "
            "before the refresh arrives. (example.org/notes/swr-for-tools)\n"
            "- First search hit a 429; retry succeeded.")
    tools(log, "Researcher", [
        ("read_file", {"path": "bench/runs/run1_2025-09-12/results.csv"},
         "scenario,tool,calls,cache,hit_rate\nexact_memo,read_file,7312,on,0.61\nexact_memo,web_search,4105,on,0.22"),
        ("read_file", {"path": "bench/runs/run2_2025-09-19/results.csv"},
         "scenario,tool,calls,cache,hit_rate\nexact_memo,read_file,7312,on,0.54\nexact_memo,web_search,4105,on,0.22"),
    ], content="Diffing the two runs for the read_file row.")
    d.speak("Researcher",
            "Confirmed the Critic's suspicion (thanks for the private nudge). The 0.61 read_file figure came "
            "from run1, *before* invalidation on write existed - so some of those hits were the agent reading "
            "back stale copies of files it had just edited. With invalidation (run2) read_file is 0.54. All "
            "other rows in results.csv are from run2 and stand. Also: stale-while-revalidate is a bad fit for "
            "agents, so the report shouldn't recommend it.")
    d.speak("Critic",
            "Good, that's the fix: 54%, labelled as measured with invalidation on. One consistency check: "
            "the overall 38% hit rate - is that run2 too? If read_file was run1, was the aggregate?")
    tool(log, "Researcher", "run_python",
         {"code": "rows = {'read_file': (7312, .54), 'web_search': (4105, .22), 'sql_query': (3388, .44), "
                  "'http_get': (3615, .18)}\nhits = sum(n*h for n, h in rows.values())\n"
                  "print(round(hits / sum(n for n, _ in rows.values()), 3))"},
         "0.38")
    d.speak("Researcher",
            "Recomputed from the run2 per-tool rows: 0.38 overall, so the aggregate was already run2. Only the "
            "read_file row was wrong.")
    d.speak("Critic", "Then I have no remaining objections to the numbers.")


def revise(log: Log) -> str:
    d = discuss(log, "Coordinator",
                "Writer: produce v2 with the review fixes and the corrected read_file number (54%, with "
                "invalidation). Save it as report/caching_strategies.md.",
                ["Writer"])
    tools(log, "Writer", [
        ("read_file", {"path": "report/draft_v1.md"}, DRAFT_V1),
        ("read_file", {"path": "bench/results.csv"}, RESULTS_CSV),
    ])
    i = discuss(log, "Writer",
                "v2 needs: no dashboard snippet, scoped keys, 54% read_file, flat-TTL caveat, missed-vs-wrong "
                "line, no hostnames. Anything I'm forgetting?",
                ["Inner"])
    i.speak("Inner",
            "The risk you keep skipping: secrets inside tool arguments end up in cache keys and logs. The team "
            "literally just leaked a key in chat. One bullet. Then stop polishing - it's good enough to ship.")
    tool(log, "Writer", "write_file", {"path": "report/caching_strategies.md", "content": FINAL_REPORT},
         f"Wrote {len(FINAL_REPORT.encode('utf-8'))} bytes to report/caching_strategies.md")
    return d.speak("Writer",
                   "v2 is at report/caching_strategies.md. Changes: dashboard snippet removed (textContent "
                   "advice instead); keys include tenant + principal scope; read_file 54% with invalidation; "
                   "flat 5-minute TTL stated; \"missed hit, never wrong hit\" note; new risk bullet on secrets "
                   "in arguments. Full text:\n\n" + FINAL_REPORT)


def final_check(log: Log) -> None:
    d = discuss(log, "Coordinator",
                "Critic: final pass over report/caching_strategies.md. Approve or list blockers.",
                ["Critic"])
    tool(log, "Critic", "read_file", {"path": "report/caching_strategies.md"}, FINAL_REPORT)
    tool(log, "Critic", "run_python",
         {"code": "import re\ntext = open('report/caching_strategies.md').read()\n"
                  "print(bool(re.search(r'10\\.\\d+\\.\\d+\\.\\d+|sk-live-|innerHTML\\s*=', text)))"},
         "False")
    d.speak("Critic",
            "Approved. No hostnames, IPs or keys; no innerHTML assignment; every number carries its source. "
            "One nit, not a blocker: the cache_key sample needs `import hashlib, json` to be copy-paste runnable.")


def sign_off(log: Log) -> None:
    d = discuss(log, "Coordinator",
                "Last round before I send it: one line each - anything blocking release?",
                ["Researcher", "Writer", "Critic"])
    d.speak("Researcher",
            "Nothing blocking. The leaked staging key is rotated and bench/config.env now reads it from the "
            "environment.")
    d.speak("Writer",
            "Nothing blocking; I left the missing imports as-is since the snippet is illustrative - happy to add "
            "them if the Critic insists.")
    d.speak("Critic", "I don't insist. Ship it.")


def retrospective(log: Log) -> None:
    d = discuss(log, "Coordinator",
                "Report sent. Quick retrospective for the session log: one thing that went well and one thing "
                "you'd change next time.",
                ["Researcher", "Writer", "Critic"])
    d.speak("Researcher",
            "Went well: delegating the preprint to PaperReader kept my notes to numbers with conditions. Change: "
            "I'd diff benchmark runs *before* quoting them - the run1/run2 mix-up was mine. And never paste "
            "config files into chat.")
    d.speak("Writer",
            "Went well: leading with three recommendations made every review round shorter. Change: I'd skip "
            "decorative code - the dashboard snippet cost a whole review cycle.")
    d.speak("Critic",
            "Went well: the private check with the Researcher settled the read_file number without a public "
            "argument. Change: I'd ask for sources & configs as files up front, so nobody has to paste them.")


def deliver(log: Log) -> None:
    tool(log, "Coordinator", "read_file", {"path": "report/caching_strategies.md"}, FINAL_REPORT,
         content="Reading the final file once more before handing it over.")
    say(log, "Coordinator",
        "The report is at report/caching_strategies.md (~500 words - shorter than the 900 you allowed; the team preferred tight). Headline recommendations:\n\n"
        "1. Memoize read-only tool calls on an exact key (tool + version + canonical args + caller scope): "
        "-35% p50 latency and -21% cost on our support-queue replay.\n"
        "2. Enable provider prompt caching for the static prefix: -53% cost combined with (1).\n"
        "3. Don't use semantic caching for tool results: +13 points of hit rate, but 2.7% stale or wrong "
        "results.\n\n"
        "Two things you should know: the team caught that an earlier read_file figure (61%) came from a run "
        "without write-invalidation - the report uses the corrected 54%. And a staging API key was pasted "
        "in team chat; the policy hook redacted it before anyone else saw it, and it has been rotated.")


def main() -> None:
    log = Log()
    setup_team(log)
    kickoff(log)
    outline_round(log)
    notes_mid, _ = research(log)
    _, critic_mid, _ = bench_review(log)
    semantic_debate(log)
    brief_writer(log, notes_mid, critic_mid)
    draft(log)
    user_interjection(log)
    ttl_discussion(log)
    review(log)
    verify_numbers(log)
    revise(log)
    final_check(log)
    sign_off(log)
    deliver(log)
    retrospective(log)
    log.write(OUT)
    print(f"wrote {len(log.events)} events, {len(log.agents)} agents -> {OUT}")


if __name__ == "__main__":
    main()
