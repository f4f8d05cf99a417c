"""`agentview demo`: a scripted multi-agent session written live, about a minute long.

Real writer-API agents running the standard tools, with scripted models: a coordinator, an Analyst who pastes a
secret (a delivery hook redacts it), a Writer with an inner voice, and a Reviewer. No network, no API key.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from pathlib import Path

from .agent import ScriptedModel
from .session import load_session
from .tools import STANDARD_TOOLS, Toolbox, ToolCall, redactor

log = logging.getLogger(__name__)
MODEL = "scripted/demo"
SECRET = "sk-live-Tp0oL9x2Qe7Rm4VbH3"
SECRET_PATTERN = r"sk-live-[A-Za-z0-9]+"
BETA = "1,240 beta users; 4.6 average rating (312 reviews); 38% still active after four weeks; top request: offline tide tables."

call = ScriptedModel.call


def scripts() -> dict[str | None, list]:
    """Each agent's replies, in the order it is asked (None: the coordinator, the root)."""
    return {
        None: [
            call("task", "call_writer", content="I'll set up a small team.", name="Writer",
                 system_prompt="You write short, warm launch posts for Tidepool, a tide-chart app for surfers "
                               "and sailors."),
            call("task", "call_analyst", name="Analyst",
                 system_prompt="You pull numbers from Tidepool's beta dashboard and quote them exactly."),
            call("task", "call_reviewer", name="Reviewer",
                 system_prompt="You review public copy: facts, tone, and anything that must never be public."),
            call("discuss", "call_kickoff", speakers=["Analyst", "Writer", "Reviewer"],
                 prompt="Kickoff: Tidepool launches Friday and we need a 150-word launch post with real beta "
                        "numbers. One line each: what do you need or bring?"),
            call("whisper", "call_rotate", to="Analyst",
                 message="That dashboard token went into the team chat. The hook caught it, but please rotate "
                         "it today - no need to make a fuss."),
            call("discuss", "call_numbers", speakers=["Analyst"],
                 prompt="Analyst: the beta numbers the post can quote, please."),
            call("discuss", "call_draft", speakers=["Writer"],
                 prompt="Writer: draft the post with those numbers. Surfers first, numbers second."),
            call("discuss", "call_review", speakers=["Reviewer", "Writer"],
                 prompt="Reviewer: check the draft against the numbers. Writer: apply the fixes."),
            "Here is the launch post, reviewed:\n\n"
            "**Tidepool is live.** It's 5 a.m., the coffee is still too hot, and you want to know one thing: "
            "is the tide right? Tidepool answers before the kettle clicks. 1,240 of you tried the beta, rated "
            "it 4.6 on average, and 38% were still checking tides after four weeks. Your top request, offline "
            "tide tables, ships Friday. Paddle out.",
        ],
        "Analyst": [
            f"I'll pull the numbers from the beta dashboard. If anyone needs to look themselves, the read "
            f"token is {SECRET}.",
            call("dashboard", "call_query", query="beta summary"),
            f"From the dashboard: {BETA}",
        ],
        "Writer": [
            "I need the numbers and one real moment to open with. I'll keep it under 150 words.",
            call("task", "call_inner", name="Inner",
                 system_prompt="You are the Writer's inner voice: honest, brief, a little impatient."),
            call("discuss", "call_think", speakers=["Inner"],
                 prompt="The numbers are fine but my draft reads like a press release. What's the opening?"),
            "Draft: Tidepool is live. At 5 a.m. you want one answer: is the tide right? Tidepool tells you "
            "before the kettle clicks. 1,240 of you tried the beta, rated it 4.6, and 38% kept using it. Your "
            "top request, offline tide tables, ships Friday. Best tide app ever made - paddle out.",
            "Fixed: the 38% now says 'after four weeks', and 'best tide app ever made' is gone.",
        ],
        "Reviewer": [
            "I'll check every number against the Analyst's figures - and please, no credentials in chat.",
            "Two fixes: '38% kept using it' must say 'after four weeks' (that's what the dashboard measures), "
            "and 'best tide app ever made' is a claim we can't back. Otherwise good to go.",
        ],
        "Inner": [
            "Stop listing features. Open with the surfer at 5 a.m. checking the tide with a hot coffee. People "
            "first, numbers second - and cut the last superlative, you know the Reviewer will.",
        ],
    }


def thinking_time(speed: float):
    """A model 'thinks' longer before a longer reply: 1.8 to 6 seconds at speed 1."""

    def delay(message: dict) -> float:
        size = len(message.get("content") or "") + 100 * len(message.get("tool_calls") or ())
        return min(6.0, 1.8 + size / 100) / speed

    return delay


def dashboard_tool(speed: float):
    async def dashboard(ctx: ToolCall) -> str:
        """An ordinary tool: a (pretend) query against the beta dashboard."""
        await asyncio.sleep(1.5 / speed)
        return f"query {ctx.arguments.get('query')!r}: {BETA}"

    return dashboard


def next_free_path(folder: Path, stem: str = "demo") -> Path:
    """demo.jsonl, else demo-2.jsonl, demo-3.jsonl, ...: an earlier run is never overwritten."""
    path, n = folder / f"{stem}.jsonl", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}.jsonl"
    return path


async def run_demo(folder: str | os.PathLike, speed: float = 1.0) -> Path:
    """Write the demo session into a new file of `folder`; returns its path."""
    if speed <= 0:
        raise ValueError("speed must be positive")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = next_free_path(folder)
    delay = thinking_time(speed)
    models = {name: ScriptedModel(replies, MODEL, delay) for name, replies in scripts().items()}
    toolbox = Toolbox(tools={**STANDARD_TOOLS, "dashboard": dashboard_tool(speed)},
                      models=models, hooks=[redactor(SECRET_PATTERN)])
    root, session = load_session(path, model=models[None], tools=toolbox, name="Coordinator")
    with session:
        root.harken("Tidepool launches on Friday. Get me a short launch post with real beta numbers, reviewed "
                    "before it goes out.")
        await root.turn()
    return path


def run(folder: str | os.PathLike, speed: float = 1.0) -> Path:
    return asyncio.run(run_demo(folder, speed))


class Background:
    """The demo on a thread of its own (for `serve --demo`); `stop` cancels it."""

    def __init__(self, folder: str | os.PathLike, speed: float = 1.0):
        self.loop = asyncio.new_event_loop()
        self.task = self.loop.create_task(run_demo(folder, speed))
        self.thread = threading.Thread(target=self._run, name="agentview-demo", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.task)
        except asyncio.CancelledError:
            pass
        except Exception:  # the server keeps serving what was written
            log.exception("the demo failed")
        finally:
            self.loop.close()

    def start(self) -> "Background":
        self.thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self.thread.is_alive() and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.task.cancel)
            except RuntimeError:  # the loop closed in between
                pass
        self.thread.join(timeout)


def main(folder: str, speed: float) -> int:
    """`agentview demo DIR [--speed X]`."""
    start = time.monotonic()
    print(f"agentview demo: writing a new session into {os.path.abspath(folder)} "
          f"(watch it with: agentview serve {folder})", flush=True)
    path = run(folder, speed)
    print(f"agentview demo: wrote {path} in {time.monotonic() - start:.1f} s", flush=True)
    return 0
