"""Tools on the writer API, as in seed 000's examples: task, discuss, whisper, and hooks.

Every agent of a tree shares one Toolbox: the tools it may call, the models new agents get, hooks that may rewrite
a delivery (its substance kept), and gates (hook agents that approve or block a tool call).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterable, Mapping

from .agent import Agent, Model
from .log import LoggedString

Tool = Callable[["ToolCall"], Awaitable["str | None"]]
# hook(text, sender, recipient) -> the text the recipient gets
Hook = Callable[[str, Agent, Agent], str]


class ToolError(Exception):
    """A tool refused its call: the message becomes an "Error: ..." result."""


@dataclass
class ToolCall:
    """One tool call being run: who called, the call, and the message that made it (the cause)."""

    agent: Agent
    call_id: str
    name: str
    arguments: dict
    message_id: str
    toolbox: "Toolbox"

    def result(self, content: str) -> str:
        """Log one result of this call in the caller's transcript."""
        return self.agent.tool_result(self.call_id, content)

    def agent_named(self, name: str) -> Agent:
        found = self.agent.find(name)
        if found is None:
            raise ToolError(f"no agent named {name!r}")
        return found


class Toolbox:
    """The tools, models, delivery hooks and gates an agent tree shares."""

    def __init__(self, tools: Mapping[str, Tool] | None = None,
                 models: Mapping[str, Model] | Callable[[str], Model] | None = None,
                 hooks: Iterable[Hook] = (), gates: Iterable["Gate"] = ()):
        self.tools = dict(STANDARD_TOOLS if tools is None else tools)
        self.models = models
        self.hooks = list(hooks)
        self.gates = list(gates)

    def model_for(self, name: str, parent: Agent) -> Model | None:
        """The model a new agent called `name` gets: from `models`, else its parent's."""
        if callable(self.models):
            return self.models(name)
        if self.models is not None and name in self.models:
            return self.models[name]
        return parent.model

    def rewrite(self, text: str, sender: Agent, recipient: Agent) -> str:
        for hook in self.hooks:
            text = hook(text, sender, recipient)
        return text

    async def run(self, agent: Agent, call: dict, message_id: str) -> None:
        """Run one tool call of `agent`'s message `message_id`; errors become error results."""
        call_id = str(call.get("id", ""))
        function = call.get("function") or {}
        name = str(function.get("name", ""))
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            agent.tool_result(call_id, "Error: the arguments are not a JSON object")
            return
        ctx = ToolCall(agent, call_id, name, arguments, message_id, self)
        for gate in self.gates:
            reason = await gate(ctx)
            if reason is not None:
                ctx.result(f"Error: Action blocked by hook '{gate.label}': {reason}")
                return
        tool = self.tools.get(name)
        try:
            if tool is None:
                raise ToolError(f"no tool named {name!r}")
            output = await tool(ctx)
        except (ToolError, KeyError, TypeError, ValueError) as error:
            message = error.args[0] if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
            ctx.result(f"Error: {message}")
            return
        if output is not None:
            ctx.result(output)


# --- the tools ------------------------------------------------------------------------------------

async def task(ctx: ToolCall) -> str:
    """Create a sub-agent: agent_created with cause = this call, then its system prompt."""
    name = ctx.arguments["name"]
    child = Agent(ctx.agent.session, system_prompt=ctx.arguments.get("system_prompt"), name=name,
                  model=ctx.toolbox.model_for(name, ctx.agent), tools=ctx.toolbox)
    ctx.agent.adopt(child).log_created(cause=ctx.message_id)
    return f"Created subagent: {name}"


class Discussion:
    """A discuss call in progress: the prompt went to every speaker; `speak` runs one turn."""

    def __init__(self, ctx: ToolCall, prompt: str, speakers: list[Agent]):
        self.ctx, self.speakers = ctx, speakers
        # The caller's prompt is new text made by this call: a piece_of_text every speaker hears.
        self.prompt_id = ctx.agent.session.log_piece_of_text(ctx.agent.agent_id, prompt, cause=ctx.message_id)
        for speaker in speakers:
            speaker.harken(LoggedString(prompt, self.prompt_id))

    def report(self, speaker: Agent, said: LoggedString) -> str:
        """The utterance goes back to the caller as a result of the call."""
        return self.ctx.result(self.ctx.toolbox.rewrite(said, sender=speaker, recipient=self.ctx.agent))

    def deliver(self, speaker: Agent, said: LoggedString) -> None:
        """Every other speaker hears "[Speaker]: ..." with the utterance as substance."""
        for other in self.speakers:
            if other is not speaker:
                speaker.inform(other, said)

    async def speak(self, speaker: Agent) -> LoggedString:
        said = await speaker.turn()
        self.report(speaker, said)
        self.deliver(speaker, said)
        return said


async def discuss(ctx: ToolCall) -> None:
    """Broadcast a prompt to the speakers, then let each speak in turn (`rounds` times)."""
    names = ctx.arguments["speakers"]
    if isinstance(names, str):
        names = [names]
    speakers = [ctx.agent_named(n) for n in names]
    discussion = Discussion(ctx, str(ctx.arguments["prompt"]), speakers)
    for _ in range(int(ctx.arguments.get("rounds", 1))):
        for speaker in speakers:
            await discussion.speak(speaker)


async def whisper(ctx: ToolCall) -> str:
    """Deliver a message to exactly one agent: a piece_of_text, heard as "[Me]: ..."."""
    target = ctx.agent_named(ctx.arguments["to"])
    message = str(ctx.arguments["message"])
    piece = ctx.agent.session.log_piece_of_text(ctx.agent.agent_id, message, cause=ctx.message_id)
    ctx.agent.inform(target, LoggedString(message, piece))
    return f"Whispered to {target.label}."


STANDARD_TOOLS: dict[str, Tool] = {"task": task, "discuss": discuss, "whisper": whisper}


# --- hooks ------------------------------------------------------------------------------------------

def redactor(pattern: str, replacement: str = "[REDACTED]") -> Hook:
    """A delivery hook replacing every match of a regular expression."""
    compiled = re.compile(pattern)

    def hook(text: str, sender: Agent, recipient: Agent) -> str:
        return compiled.sub(replacement, text)

    return hook


def describe_call(ctx: ToolCall) -> str:
    who = ctx.agent.label
    if ctx.name == "task":
        return (f"Agent '{who}' is attempting to create subagent '{ctx.arguments.get('name')}'. "
                f"Current subagent count: {len(ctx.agent.subagents)}. Approve?")
    return f"Agent '{who}' is calling {ctx.name}({json.dumps(ctx.arguments, ensure_ascii=False)}). Approve?"


class Gate:
    """A hook agent asked before some tool calls; an answer starting with DENY blocks the call."""

    def __init__(self, agent: Agent, tools: Iterable[str] = ("task",),
                 describe: Callable[[ToolCall], str] = describe_call):
        self.agent, self.tools, self.describe = agent, set(tools), describe

    @property
    def label(self) -> str:
        return self.agent.label

    async def __call__(self, ctx: ToolCall) -> str | None:
        """None to let the call run, else the reason it is blocked."""
        if ctx.name not in self.tools:
            return None
        self.agent.harken(self.describe(ctx))
        verdict = await self.agent.turn()
        denied = re.match(r"\s*DENY\b[\s.:,-]*(.*)", verdict, re.S | re.I)
        return (denied.group(1).strip() or "denied") if denied else None
