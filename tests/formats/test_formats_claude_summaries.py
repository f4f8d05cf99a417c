"""A Claude Code `summary` record names its conversation by `leafUuid`, and often sits at the top of a later file
of the same project: it titles the session that holds that line, whichever file arrives first."""

import pytest

from claude_lines import Transcript
from events import scanned
from viewer.library.library import Library

EARLIER, LATER = "aaaa0000-0000-4000-8000-000000000001", "bbbb0000-0000-4000-8000-000000000002"


def earlier():
    t = Transcript(EARLIER)
    t.user("The parser drops the last token, can you look?")
    t.response("msg_a1", [{"type": "text", "text": "Looking."},
                          {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "/p.py"}}])
    t.result("toolu_a", "def parse(): ...")
    t.response("msg_a2", [{"type": "text", "text": "Fixed the off-by-one."}])
    return t


def later(leaf):
    """A resumed conversation's file: Claude Code writes the summaries of earlier conversations at its top."""
    t = Transcript(LATER)
    t.raw({"type": "summary", "summary": "Parser off-by-one fixed", "leafUuid": leaf})
    t.raw({"type": "summary", "summary": "A conversation of another project", "leafUuid": "ffff-0001"})
    t.user("Now add a test for it")
    t.response("msg_b1", [{"type": "text", "text": "Added."}])
    return t


def titles(library):
    return {s.id.split(":")[1][:4]: s.title for s in library.listing()}


def test_a_summary_in_a_later_file_titles_the_session_that_holds_its_leaf(tmp_path):
    a = earlier()
    a.write(tmp_path / "proj" / f"{EARLIER}.jsonl")
    later(a.last).write(tmp_path / "proj" / f"{LATER}.jsonl")
    assert titles(scanned(tmp_path)) == {"aaaa": "Parser off-by-one fixed", "bbbb": "Now add a test for it"}


@pytest.mark.parametrize("first", ["earlier", "later"])
def test_it_does_so_whichever_file_arrives_first(tmp_path, first):
    a = earlier()
    files = {"earlier": (a, tmp_path / "proj" / f"{EARLIER}.jsonl"),
             "later": (later(a.last), tmp_path / "proj" / f"{LATER}.jsonl")}
    library = Library(tmp_path)
    library.scan()
    (t, path), (t2, path2) = files[first], files["later" if first == "earlier" else "earlier"]
    t.write(path)
    library.refresh(str(path))
    version = library.version
    t2.write(path2)
    library.refresh(str(path2))
    assert titles(library) == {"aaaa": "Parser off-by-one fixed", "bbbb": "Now add a test for it"}
    assert library.version > version


def test_a_summary_whose_leaf_is_written_later_in_the_other_file(tmp_path):
    a = earlier()
    leaf_line = a.lines.pop()  # the conversation's last line is not written yet
    path = a.write(tmp_path / "proj" / f"{EARLIER}.jsonl")
    later(leaf_line["uuid"]).write(tmp_path / "proj" / f"{LATER}.jsonl")
    library = scanned(tmp_path)
    assert titles(library)["aaaa"] == "The parser drops the last token, can you look?"
    a.lines.append(leaf_line)
    a.write(path)
    library.refresh(str(path))
    assert titles(library)["aaaa"] == "Parser off-by-one fixed"


def test_the_title_survives_its_file_being_read_again_and_an_own_title_wins(tmp_path):
    a = earlier()
    path = a.write(tmp_path / "proj" / f"{EARLIER}.jsonl")
    later(a.last).write(tmp_path / "proj" / f"{LATER}.jsonl")
    library = scanned(tmp_path)
    s = library.get(f"proj:{EARLIER}")
    a.lines.insert(1, a.lines[0] | {"uuid": "aaaa-0000x", "message": {"role": "user", "content": "(rewritten)"}})
    a.write(path)  # rewritten: the session is read again from the start
    library.refresh(str(path))
    assert s.epoch == 1 and titles(library)["aaaa"] == "Parser off-by-one fixed"
    a.raw({"type": "ai-title", "sessionId": EARLIER, "aiTitle": "Off-by-one in the parser"})
    a.write(path)
    library.refresh(str(path))
    assert titles(library)["aaaa"] == "Off-by-one in the parser"


def test_summaries_of_another_project_folder_are_not_taken(tmp_path):
    a = earlier()
    a.write(tmp_path / "proj" / f"{EARLIER}.jsonl")
    later(a.last).write(tmp_path / "other-proj" / f"{LATER}.jsonl")
    assert titles(scanned(tmp_path))["aaaa"] == "The parser drops the last token, can you look?"


def test_a_project_whose_every_file_repeats_the_earlier_summaries_is_read_in_quadratic_work(tmp_path, monkeypatch):
    """Claude Code has written the summaries of every earlier conversation at the top of each new file of a project
    (anthropics/claude-code#2597): S files hold S²/2 summaries of S leaves. Each is titled by its own, and the
    summaries handed between sessions stay within a few S² (told again and again, they were S³/2)."""
    from viewer.formats import claude_code_title

    S = 60
    leaves = []
    for i in range(S):
        sid = f"{i:08x}-0000-4000-8000-000000000000"
        t = Transcript(sid)
        for j, leaf in enumerate(leaves):
            t.raw({"type": "summary", "summary": f"Summary of conversation {j}", "leafUuid": leaf})
        t.user(f"Task number {i}")
        t.response(f"msg_{i}", [{"type": "text", "text": "Done."}])
        t.write(tmp_path / "proj" / f"{sid}.jsonl")
        leaves.append(t.last)
    handed = []
    real = claude_code_title.Titles.take
    monkeypatch.setattr(claude_code_title.Titles, "take",
                        lambda self, summaries: (handed.append(len(summaries)), real(self, summaries))[1])
    library = scanned(tmp_path)
    titles = {s.id.split(":")[1][:8]: s.title for s in library.listing()}
    assert titles == {f"{i:08x}": f"Summary of conversation {i}" if i < S - 1 else f"Task number {i}"
                      for i in range(S)}
    assert sum(handed) < 3 * S * S, sum(handed)
