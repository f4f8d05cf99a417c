"""Claude Code transcript lines built the way Claude Code 1.x-2.x writes them (the shapes of the public
claude-code-log test data): an envelope (uuid, parentUuid chain, sessionId, timestamp, cwd, version) around a
user or assistant message; an API response written one line per content block."""

from __future__ import annotations

import json


class Transcript:
    def __init__(self, session: str, prefix: str | None = None) -> None:
        self.session, self.prefix, self.lines, self.last, self.n = session, prefix or session[:8], [], None, 0

    def _envelope(self, kind: str, **extra) -> dict:
        self.n += 1
        uuid = f"{self.prefix}-{self.n:04d}"
        line = {"parentUuid": self.last, "isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
                "sessionId": self.session, "version": "1.0.71", "gitBranch": "main", "type": kind,
                "uuid": uuid, "timestamp": f"2026-03-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z", **extra}
        self.last = uuid
        self.lines.append(line)
        return line

    def user(self, content, **extra) -> dict:
        return self._envelope("user", message={"role": "user", "content": content}, **extra)

    def command(self, name: str, args: str = "") -> dict:
        """A slash command as 1.0.x writes it: the message first, then the name and its arguments."""
        return self.user(f"<command-message>{name.lstrip('/')} is running…</command-message>\n"
                         f"<command-name>{name}</command-name>\n<command-args>{args}</command-args>")

    def meta(self, text: str) -> dict:
        return self.user([{"type": "text", "text": text}], isMeta=True)

    def result(self, call_id: str, text: str, **extra) -> dict:
        return self.user([{"tool_use_id": call_id, "type": "tool_result", "content": text}], **extra)

    def response(self, msg_id: str, blocks: list, model: str = "claude-sonnet-4-20250514", usage=None) -> list:
        usage = usage or {"input_tokens": 4, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000,
                          "output_tokens": 20, "service_tier": "standard"}
        out = []
        for i, block in enumerate(blocks):
            out.append(self._envelope("assistant", requestId=f"req_{msg_id}", message={
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [block],
                "stop_reason": "tool_use" if block.get("type") == "tool_use" else None, "stop_sequence": None,
                "usage": usage}))
        return out

    def raw(self, line: dict) -> dict:
        self.lines.append(line)
        return line

    def text(self, final_newline: bool = True) -> str:
        body = "\n".join(json.dumps(line) for line in self.lines)
        return body + ("\n" if final_newline else "")

    def write(self, path, final_newline: bool = True):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.text(final_newline))
        return path
