"""The Agent of seed 000, with a pluggable async model, and ScriptedModel for tests and demos.

A model is any callable from the agent's message list to an assistant message dict (or an awaitable of one); wrap
a real LLM client in a function of that shape.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Awaitable, Callable, Iterable

from .log import LoggedString, SessionLog

Model = Callable[[list[dict]], "dict | Awaitable[dict]"]


class Agent:
    """An LLM-powered agent: a transcript, sub-agents, and a session (a SessionLog) to log through."""

    def __init__(self, session: SessionLog, system_prompt: str | None = None, init_prompt: list[dict] | None = None,
                 *, name: str | None = None, model: Model | None = None, tools=None,
                 language_model: str | None = None, agent_id: str | None = None):
        """`init_prompt` is a transcript already in the log (resumption): it is not logged again.

        The agent only allocates its id; whoever creates it logs its creation (`log_created`),
        because only the parent or tool knows the cause.
        """
        self.session = session
        self.agent_id = agent_id or session.allocate_agent_id()
        self.name = name
        self.model = model
        self.tools = tools
        self.language_model = language_model or getattr(model, "language_model", None)
        self.parent: Agent | None = None
        self.subagents: list[Agent] = []
        self.transcript: list[dict] = [dict(m) for m in init_prompt or ()]
        self._unlogged_system_prompt = None
        self.last_response_id: str | None = None  # the message whose tool calls run_tools runs
        if system_prompt is not None and init_prompt is None:
            self.transcript.append({"role": "system", "content": str(system_prompt)})
            self._unlogged_system_prompt = self.transcript[-1]
        session.register(self)

    def __repr__(self) -> str:
        return f"<Agent {self.agent_id} {self.name or ''}>".replace(" >", ">")

    @property
    def label(self) -> str:
        """How others see this agent in "[Name]: ..." deliveries."""
        return self.name or self.agent_id

    # --- the tree ----------------------------------------------------------------------------------

    def log_created(self, cause: str | list[str] | None = None) -> str:
        """Log this agent's agent_created (cause: the creating tool call), then its system prompt."""
        message_id = self.session.log_agent_created(self.agent_id, cause=cause, name=self.name,
                                                    language_model=self.language_model)
        self._log_system_prompt()
        return message_id

    def adopt(self, child: "Agent") -> "Agent":
        child.parent = self
        self.subagents.append(child)
        return child

    def terminate(self) -> None:
        """Leave the agent tree and memory; the log keeps every word (and the id stays taken)."""
        if self.parent is not None and self in self.parent.subagents:
            self.parent.subagents.remove(self)
        self.parent = None
        self.session.evict(self.agent_id)

    def find(self, name: str) -> "Agent | None":
        """An agent by name: my sub-agents first, then anyone alive in the session (latest first)."""
        for agent in self.subagents:
            if agent.name == name:
                return agent
        for agent in reversed(list(self.session.live.values())):
            if agent.name == name and agent is not self:
                return agent
        return None

    # --- the transcript ----------------------------------------------------------------------------

    def _log_system_prompt(self) -> None:
        # Logged right after agent_created; if the creator logged that itself, before the first entry.
        if self._unlogged_system_prompt is not None:
            message, self._unlogged_system_prompt = self._unlogged_system_prompt, None
            self.session.log_transcript_entry(self.agent_id, message)

    def _log(self, message: dict, substance: str | None = None) -> str:
        self._log_system_prompt()
        message_id = self.session.log_transcript_entry(self.agent_id, message, substance=substance)
        self.transcript.append(message)
        return message_id

    def harken(self, input: str) -> str:
        """Add a user message; a LoggedString's message_id becomes the entry's substance."""
        return self._log({"role": "user", "content": str(input)}, substance=getattr(input, "message_id", None))

    async def response(self) -> LoggedString:
        """Ask the model for the next assistant message, log it, and return its content."""
        if self.model is None:
            raise RuntimeError(f"{self!r} has no model")
        reply = self.model(list(self.transcript))
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, str):
            reply = {"content": reply}
        message = {k: v for k, v in dict(reply).items() if v is not None}
        message["role"] = "assistant"
        message_id = self.last_response_id = self._log(message)
        return LoggedString(message.get("content") or "", message_id)

    def tool_result(self, call_id: str, content: str) -> str:
        """Log a tool's result in this agent's transcript."""
        return self._log({"role": "tool", "tool_call_id": call_id, "content": str(content)})

    def inform(self, dst: "Agent", txt: str) -> str:
        """Deliver "[Me]: txt" to another agent; the substance stays txt's (hooks may rewrite the text)."""
        text = f"[{self.label}]: {txt}"
        if self.tools is not None:
            text = self.tools.rewrite(text, sender=self, recipient=dst)
        return dst.harken(LoggedString(text, getattr(txt, "message_id", None)))

    # --- acting ----------------------------------------------------------------------------------------

    def pending_calls(self) -> list[dict]:
        """The tool calls of the last message, if it is an assistant message that made some."""
        last = self.transcript[-1] if self.transcript else {}
        return list(last.get("tool_calls") or ()) if last.get("role") == "assistant" else []

    async def run_tools(self) -> None:
        """Run the tool calls of the last response; each logs its result(s) here."""
        for call in self.pending_calls():
            if self.tools is None:
                self.tool_result(call.get("id", ""), "Error: this agent has no tools")
            else:
                await self.tools.run(self, call, self.last_response_id)

    async def turn(self, max_steps: int = 25) -> LoggedString:
        """Respond, running tool calls as they come, until the model says something."""
        for _ in range(max_steps):
            said = await self.response()
            if not self.pending_calls():
                return said
            await self.run_tools()
        raise RuntimeError(f"{self!r} made {max_steps} rounds of tool calls without an answer")


class ScriptedModel:
    """A model that plays back a script: each reply is a str (an utterance) or a message dict.

    Before each reply `delay` seconds pass (a demo's thinking time): a number, or a function
    of the reply message. `ScriptedModel.call` builds a tool-call message.
    """

    def __init__(self, replies: Iterable[str | dict], language_model: str = "scripted",
                 delay: float | Callable[[dict], float] = 0.0):
        self.replies = list(replies)
        self.language_model = language_model
        self.delay = delay
        self.calls = 0

    async def __call__(self, messages: list[dict]) -> dict:
        if self.calls >= len(self.replies):
            raise RuntimeError(f"the script ran out after {self.calls} replies")
        reply = self.replies[self.calls]
        self.calls += 1
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else {"role": "assistant", **reply}
        seconds = self.delay(message) if callable(self.delay) else self.delay
        if seconds > 0:
            await asyncio.sleep(seconds)
        return message

    @staticmethod
    def call(tool: str, call_id: str, content: str | None = None, **arguments: Any) -> dict:
        """An assistant message making one tool call (arguments serialised as JSON)."""
        call = {"id": call_id, "function": {"name": tool, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        message: dict = {"tool_calls": [call]}
        if content is not None:
            message["content"] = content
        return message
