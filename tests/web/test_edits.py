"""Calls that change files, told by their arguments' shape whatever the CLI: each CLI's edit a diff with its
line counts, Codex's apply_patch read file by file, a file written whole highlighted by its name; secrets masked
in all of them; every other call left alone."""

import orjson
import pytest

from viewer.core.redact import ACTIVE
from viewer.web import edits

SECRET = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vW7"


def change(name, arguments):
    call = {"arguments": orjson.dumps(arguments).decode() if not isinstance(arguments, str) else arguments,
            "arguments_valid": not isinstance(arguments, str)}
    return edits.file_change(name, edits.parse_arguments(call))


@pytest.mark.parametrize("name, arguments", [
    ("Edit", {"file_path": "/a/x.py", "old_string": "a\nb", "new_string": "a\nc\nd"}),  # Claude Code
    ("replace", {"file_path": "/a/x.py", "old_string": "a\nb", "new_string": "a\nc\nd"}),  # Gemini CLI
    ("edit", {"filePath": "/a/x.py", "oldString": "a\nb", "newString": "a\nc\nd"}),  # OpenCode
    ("str_replace", {"path": "/a/x.py", "old_str": "a\nb", "new_str": "a\nc\nd"}),  # Copilot CLI
])
def test_each_clis_edit_is_a_diff_with_line_counts(name, arguments):
    made = change(name, arguments)
    (f,) = made["files"]
    assert f["path"] == "/a/x.py"
    assert f["lines"] == [("ctx", "a"), ("del", "b"), ("add", "c"), ("add", "d")]
    assert edits.change_counts(made) == (2, 1)
    html = edits.change_html(made)
    assert '<span class="dl d-del">-b</span>' in html and '<span class="dl d-add">+c</span>' in html
    assert '<span class="diff-added">+2</span>' in html and "&#8722;1" in html


def test_a_multiedit_is_one_diff_of_its_edits():
    made = change("MultiEdit", {"file_path": "/a/x.py", "edits": [{"old_string": "one", "new_string": "1"},
                                                                   {"old_string": "two", "new_string": "2"}]})
    assert [op for op, _ in made["files"][0]["lines"]] == ["del", "add", "hunk", "del", "add"]
    assert edits.change_counts(made) == (2, 2)


def test_an_apply_patch_is_read_file_by_file():
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n"
             "     return 0\n*** Add File: docs/notes.md\n+# Notes\n+first\n*** Delete File: old.txt\n*** End Patch")
    for made in (change("apply_patch", patch), change("shell", {"command": ["apply_patch", patch]})):
        files = made["files"]
        assert [(f["path"], f["action"], f["added"], f["removed"]) for f in files] == [
            ("src/app.py", "update", 1, 1), ("docs/notes.md", "add", 2, 0), ("old.txt", "delete", 0, 0)]
        assert files[0]["lines"][0] == ("hunk", "@@ def main():")
        assert edits.change_counts(made) == (3, 1)


def test_a_file_written_whole_is_highlighted_by_its_name():
    made = change("Write", {"file_path": "/a/retry.py", "content": "def retry():\n    return 1\n"})
    assert edits.change_counts(made) == (2, 0)
    html = edits.change_html(made)
    assert 'data-language="python"' in html and '<span class="k">def</span>' in html
    assert change("write_file", {"file_path": "notes.txt", "content": "plain"})["written"] == "notes.txt"


def test_other_calls_change_no_file():
    assert change("Bash", {"command": "ls", "description": "list"}) is None
    assert change("Read", {"file_path": "/a/x.py"}) is None
    assert change("Task", {"prompt": "write content", "content": "x"}) is None  # content, but no file
    assert change("Edit", "not json {") is None


def test_log_text_in_a_diff_is_escaped_and_masked():
    token = ACTIVE.set(True)
    try:
        made = change("Edit", {"file_path": "/a/<x>.py", "old_string": "key = 'old'",
                               "new_string": f"key = '{SECRET}' <script>"})
        html = edits.change_html(made)
        written = edits.change_html(change("Write", {"file_path": "/a/k.py", "content": f"KEY = '{SECRET}'\n"}))
    finally:
        ACTIVE.reset(token)
    assert SECRET not in html and SECRET not in written
    assert "<script>" not in html and "&lt;script&gt;" in html and "/a/&lt;x&gt;.py" in html
