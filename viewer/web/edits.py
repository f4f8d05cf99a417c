"""A tool call that changes files, as a reader wants it: a red/green diff with line counts for an edit (Claude
Code's Edit and MultiEdit, Gemini CLI's replace, Copilot's edit, OpenCode's edit, Codex's apply_patch), the file's
text highlighted for a file written whole (Write, write_file, create...).

Told by the arguments' shape, not only the tool's name: each CLI names its keys its own way (KEYS). Pure but
for masking: every piece of log text goes through `shown` before it is escaped.
"""

from __future__ import annotations

import difflib
import html
from typing import Any

from viewer.core import jsonio
from viewer.core.redact import ACTIVE, mask, shown

from . import text as text_html

# The argument keys each CLI uses: the file, the text replaced and its replacement, a whole file's text.
PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "filename")
OLD_KEYS = ("old_string", "oldString", "old_str")
NEW_KEYS = ("new_string", "newString", "new_str")
CONTENT_KEYS = ("content", "file_text", "contents")
WRITE_TOOLS = frozenset({"write", "write_file", "writefile", "create", "create_file", "createfile"})
_CHANGE_KEYS = frozenset((*OLD_KEYS, *CONTENT_KEYS, "edits"))  # a call with none of these changes no file
PATCH_START = "*** Begin Patch"
# A diff longer than this many lines is shown folded after its first ones (a file rewritten whole, say).
SHOWN_LINES = 400


def _first(args: dict, keys) -> Any:
    return next((args[k] for k in keys if isinstance(args.get(k), str)), None)


def _patch_text(args) -> str | None:
    """The apply_patch text a call carries: its whole input (Codex's custom tool), or one string of its
    arguments or of its command list (older Codex: shell(["apply_patch", "*** Begin Patch..."]))."""
    if isinstance(args, str):
        return args if PATCH_START in args else None
    values = args.values() if isinstance(args, dict) else args if isinstance(args, list) else ()
    for value in values:
        if isinstance(value, (str, list)):
            found = _patch_text(value)
            if found:
                return found
    return None


def parse_arguments(call: dict) -> Any:
    """A call's arguments as parsed JSON, or the raw text when they are not JSON."""
    if not call.get("arguments_valid"):
        return call.get("arguments") or ""
    try:
        return jsonio.loads(call.get("arguments") or "null")
    except ValueError:
        return call.get("arguments") or ""


def file_change(name: str, args) -> dict | None:
    """What a call does to files: {"files": [{"path", "lines": [(op, text)], "added", "removed"}]} for an edit,
    {"written": path, "text": ...} for a file written whole; None for any other call."""
    patch = _patch_text(args)
    if patch is not None:
        return {"files": _patch_files(patch)}
    if not isinstance(args, dict) or args.keys().isdisjoint(_CHANGE_KEYS):
        return None
    path = _first(args, PATH_KEYS) or ""
    old, new = _first(args, OLD_KEYS), _first(args, NEW_KEYS)
    if old is not None and new is not None:
        return {"files": [_file(path, _line_diff(old, new))]}
    edits = args.get("edits")
    if isinstance(edits, list) and edits and all(isinstance(e, dict) for e in edits):
        lines: list[tuple[str, str]] = []
        for e in edits:
            o, n = _first(e, OLD_KEYS), _first(e, NEW_KEYS)
            if o is None or n is None:
                return None
            if lines:
                lines.append(("hunk", "…"))
            lines.extend(_line_diff(o, n))
        return {"files": [_file(path, lines)]}
    written = _first(args, CONTENT_KEYS)
    if written is not None and path and name.lower() in WRITE_TOOLS:
        return {"written": path, "text": written}
    return None


def _file(path: str, lines: list[tuple[str, str]]) -> dict:
    return {"path": path, "lines": lines, "added": sum(op == "add" for op, _ in lines),
            "removed": sum(op == "del" for op, _ in lines)}


def _line_diff(old: str, new: str) -> list[tuple[str, str]]:
    """The lines removed, added and kept from `old` to `new` (all of them: an edit's strings are short)."""
    a, b = old.splitlines(), new.splitlines()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(("ctx", line) for line in a[i1:i2])
            continue
        out.extend(("del", line) for line in a[i1:i2])
        out.extend(("add", line) for line in b[j1:j2])
    return out


def _patch_files(patch: str) -> list[dict]:
    """The files of an apply_patch text (`*** Update File: p`, `*** Add File: p`, `*** Delete File: p`, then
    hunks of +, - and context lines), each with its lines."""
    files: list[dict] = []
    current: dict | None = None
    for line in patch.splitlines():
        if line.startswith("*** ") and " File: " in line:
            action, _, path = line[4:].partition(" File: ")
            current = {"path": path.strip(), "action": action.strip().lower(), "lines": []}
            files.append(current)
        elif line.startswith("*** Move to: ") and current is not None:
            current["path"] += f" → {line[13:].strip()}"
        elif line.startswith("***") or current is None:
            continue
        elif line.startswith("@@"):
            current["lines"].append(("hunk", line))
        elif line.startswith("+"):
            current["lines"].append(("add", line[1:]))
        elif line.startswith("-"):
            current["lines"].append(("del", line[1:]))
        else:
            current["lines"].append(("ctx", line[1:] if line.startswith(" ") else line))
    return [{**_file(f["path"], f["lines"]), "action": f["action"]} for f in files]


_MARK = {"add": "+", "del": "-", "ctx": " ", "hunk": ""}


def counts_html(added: int, removed: int) -> str:
    return (f'<span class="diff-stat" title="{added} line{"s" if added != 1 else ""} added, {removed} removed">'
            f'<span class="diff-added">+{added}</span> <span class="diff-removed">&#8722;{removed}</span></span>')


def _esc(value: str) -> str:
    return html.escape(shown(value), quote=False)


def change_html(change: dict) -> str:
    """The diff of each file (its path, +N −M, the lines) or the written file, highlighted by its name."""
    if "written" in change:
        code = shown(change["text"])
        shown_code = text_html.highlighted_file(code, change["written"])
        lines = change["text"].count("\n") + (0 if change["text"].endswith("\n") else 1)
        return (f'<div class="file-change written"><p class="diff-file"><span class="diff-path">'
                f'{_esc(change["written"])}</span> {counts_html(lines, 0)} <span class="muted">written whole'
                f'</span></p>{mask(shown_code) if ACTIVE.get() else shown_code}</div>')
    out = []
    for f in change["files"]:
        action = f' <span class="muted">{_esc(f["action"])}</span>' if f.get("action") not in (None, "update") else ""
        body = "".join(f'<span class="dl d-{op}">{_MARK[op]}{_esc(line)}</span>' for op, line in f["lines"][:SHOWN_LINES])
        more = len(f["lines"]) - SHOWN_LINES
        tail = f'<p class="muted">… {more} more lines in the raw arguments</p>' if more > 0 else ""
        out.append(f'<div class="file-change"><p class="diff-file"><span class="diff-path">{_esc(f["path"])}</span> '
                   f'{counts_html(f["added"], f["removed"])}{action}</p><pre class="edit-diff">{body}</pre>{tail}</div>')
    return "".join(out)


def change_counts(change: dict) -> tuple[int, int]:
    """(+N, −M) of a whole change: every file's."""
    if "written" in change:
        text = change["text"]
        return text.count("\n") + (0 if text.endswith("\n") else 1), 0
    return sum(f["added"] for f in change["files"]), sum(f["removed"] for f in change["files"])
