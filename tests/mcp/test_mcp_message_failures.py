"""The `message` tool marks a failed entry by the rule the pages use (core/failures.py): a seed-000 result that
starts with "Error:" fails though it carries no `is_error`, and a call a hook blocked is said refused."""

from conftest import write_events
from events import calls, created, result, tool_call, user

from viewer.mcp.context import Viewer
from viewer.mcp.transcripts import message
from viewer.web.app import create_app


def test_the_message_tool_names_each_failure_s_kind(tmp_path):
    write_events(tmp_path / "s" / "run.jsonl", [
        created("m0", "root", name="root"), user("m1", "root", "go"),
        calls("m2", "root", tool_call("c1", "bash")), result("m3", "root", "c1", "Error: exit 2", name="bash"),
        calls("m4", "root", tool_call("c2", "rm")),
        result("m5", "root", "c2", "Error: Action blocked by hook: no deletes", name="rm"),
        calls("m6", "root", tool_call("c3", "ls")), result("m7", "root", "c3", "an error log, listed", name="ls")])
    viewer = Viewer(create_app(tmp_path / "s", watch=False))
    heads = {m: viewer.run(lambda m=m: message(viewer, "run", m)).splitlines()[1] for m in ("m3", "m5", "m7")}
    assert heads["m3"].startswith('[m3] root "root" RECEIVED [tool error]:')
    assert heads["m5"].startswith('[m5] root "root" RECEIVED [refused]:')
    assert heads["m7"].startswith('[m7] root "root" RECEIVED:')  # a result that says "error" did not fail
