"""Claude Code slash commands and their output shown as the user typed and saw them: `/name args` (marked
"command"), the output without its tags (marked "command output"), terminal escapes stripped from it and from
system and hook messages; the same when the entry is read again from its file."""

from claude_lines import Transcript
from events import scanned


def test_commands_their_output_and_escapes(tmp_path):
    t = Transcript("c0ffee00-0000-4000-8000-0000000000e6")
    command = t.command("/review", "the parser")
    output = t.user("<local-command-stdout>\x1b[1mReviewed\x1b[22m 3 files</local-command-stdout>")
    shell = t.user("<bash-input>ls src</bash-input>")
    plain = t.user("Thanks, now fix it \x1b[31m(red)\x1b[0m")
    hook = t.raw({"type": "system", "subtype": "informational", "uuid": "sys-1", "parentUuid": plain["uuid"],
                  "sessionId": t.session, "timestamp": "2026-03-01T10:05:00.000Z", "level": "info",
                  "content": "PostToolUse:Edit [ruff] \x1b[32mAll checks passed!\x1b[0m"})
    t.write(tmp_path / "proj" / f"{t.session}.jsonl")
    s = scanned(tmp_path).get(f"proj:{t.session}")
    shown = {m: (s.event(m)["content"], s.event(m).get("markers")) for m in
             (command["uuid"], output["uuid"], shell["uuid"], plain["uuid"], hook["uuid"])}
    assert shown == {
        command["uuid"]: ("/review the parser", ["command"]),
        output["uuid"]: ("Reviewed 3 files", ["command output"]),
        shell["uuid"]: ("! ls src", ["command"]),
        plain["uuid"]: ("Thanks, now fix it (red)", []),
        hook["uuid"]: ("PostToolUse:Edit [ruff] All checks passed!", ["informational"]),
    }
    assert s.title == "/review the parser"
