"""Provenance: the word diff, deliveries beside their originals, and the hook audit page and its JSON twin."""

import pytest

from conftest import write_events
from dom import parse
from events import created, piece, say, user
from viewer.reads import provenance
from viewer.reads.session_viewer import load_index


def rebuilt(runs, keep):
    return "".join(r["text"] for r in runs if r["op"] in ("equal", keep))


@pytest.mark.parametrize("original,delivered", [
    ("password: 1234 ok", "[Jack]: password: [REDACTED] ok"),
    ("", "all new"),
    ("all gone", ""),
    ("same\ntext  with  spaces", "same\ntext  with  spaces"),
    ("line one\nline two\n", "line one\nline 2\nline three\n"),
])
def test_word_diff_rebuilds_both_texts(original, delivered):
    runs = provenance.word_diff(original, delivered)
    assert rebuilt(runs, "delete") == original and rebuilt(runs, "insert") == delivered


def test_word_diff_marks_whole_words():
    runs = provenance.word_diff("password: 1234 ok", "[Jack]: password: [REDACTED] ok")
    assert runs == [{"op": "insert", "text": "[Jack]: "}, {"op": "equal", "text": "password: "},
                    {"op": "delete", "text": "1234"}, {"op": "insert", "text": "[REDACTED]"},
                    {"op": "equal", "text": " ok"}]
    assert provenance.diff_counts(runs) == {"deleted": 1, "inserted": 2}  # 1234 out; Jack, REDACTED in


def test_very_long_texts_are_diffed_by_line():
    original = "\n".join(f"line {i} " + "word " * 10 for i in range(2000))
    delivered = original.replace("line 1000 ", "line MASKED ")
    runs = provenance.word_diff(original, delivered)
    assert rebuilt(runs, "delete") == original and rebuilt(runs, "insert") == delivered
    assert [r for r in runs if r["op"] == "delete"][0]["text"].startswith("line 1000 ")


@pytest.fixture
def hooked(tmp_path):
    # A pin, not a password: these tests are about diffs, and must not depend on secret masking.
    return write_events(tmp_path / "sessions" / "hooked.jsonl", [
        created("m1", "root", name="Root"), created("m2", "jack", name="Jack"), created("m3", "jill", name="Jill"),
        say("m4", "jack", "my pin: 1234"),
        user("m5", "jill", "[Jack]: my pin: [REDACTED]", substance="m4"),
        user("m6", "root", "[Jack]: my pin: 1234", substance="m4"),
        piece("m7", "root", "Meet at noon", cause="m1"),
        user("m8", "jack", "Meet at 1pm", substance="m7"),
        user("m9", "jill", "Meet at 2pm", substance="m7"),
        user("m10", "jill", "lost", substance="nowhere"),
    ])


def test_hook_audit_groups_modified_deliveries_by_receiver(hooked):
    audit = provenance.hook_audit(load_index(hooked))
    assert (audit["deliveries"], audit["modified"]) == (5, 3)
    assert [(g["agent_id"], g["count"], g["received"]) for g in audit["groups"]] == [("jack", 1, 1), ("jill", 2, 3)]
    assert [d["message_id"] for d in audit["groups"][1]["deliveries"]] == ["m5", "m9"]
    m5 = audit["groups"][1]["deliveries"][0]
    assert (m5["from_name"], m5["original"], m5["counts"]["deleted"]) == ("Jack", "my pin: 1234", 1)


@pytest.fixture
def hooked_client(hooked):
    from viewer.web.app import create_app

    return create_app(hooked.parent, watch=False).test_client()


def test_hook_audit_page_and_its_json_twin(hooked_client):
    doc = parse(hooked_client.get("/s/hooked/hooks").data)
    rows = doc.by_id("av-hook-counts").find_all("tr", )[1:]
    assert [(r.attrs["data-agent"], [td.text for td in r.find_all("td")][1:]) for r in rows] == [
        ("jack", ["1", "1"]), ("jill", ["2", "3"])]
    jill = doc.find_all("section", data_agent="jill")[0]
    assert [d.text for d in jill.find_all("del")] == ["1234", "noon"]
    assert [i.text for i in jill.find_all("ins")] == ["[Jack]: ", "[REDACTED]", "2pm"]
    data = hooked_client.get("/api/sessions/hooked/hooks").get_json()
    assert [(g["agent_id"], g["count"]) for g in data["groups"]] == [("jack", 1), ("jill", 2)]
    assert data["url"] == "/s/hooked/hooks" and data["modified"] == 3


def test_message_page_shows_the_delivery_beside_its_original(hooked_client):
    doc = parse(hooked_client.get("/s/hooked/messages/m5").data)
    box = doc.by_id("av-prov-m5")
    assert "modified on its way" in box.text
    original, delivered = box.find_all("pre")
    assert [d.text for d in original.find_all("del")] == ["1234"]
    assert original.text == "my pin: 1234" and delivered.text == "[Jack]: my pin: [REDACTED]"
    # The original's page lists every delivery of it; the formatted-only one is not marked modified.
    doc = parse(hooked_client.get("/s/hooked/messages/m4").data)
    assert "modified on its way" in doc.by_id("av-prov-m5").text
    assert "modified on its way" not in doc.by_id("av-prov-m6").text
    assert hooked_client.get("/api/sessions/hooked/messages/m4").get_json()["provenance"]["deliveries"][1]["modified"] is False
    assert parse(hooked_client.get("/s/hooked/messages/m1").data).by_id("av-provenance") is None


def test_agent_and_dialog_pages_diff_modified_deliveries(hooked_client):
    entry = parse(hooked_client.get("/s/hooked/agents/jill").data).by_id("m5")
    assert [d.text for d in entry.find_all("del")] == ["1234"] and [i.text for i in entry.find_all("ins")] == [
        "[Jack]: ", "[REDACTED]"]
    item = parse(hooked_client.get("/s/hooked/dialog?agents=jack,jill").data).by_id("m4")
    assert [d.text for d in item.find_all("del")] == ["1234"]
    assert "What Jill received (m5)" in item.text


def test_log_text_in_diffs_is_escaped(tmp_path):
    from viewer.web.app import create_app

    write_events(tmp_path / "x" / "x.jsonl", [say("m1", "a", "<b>hi</b>"), user("m2", "b", "<script>x()</script>", substance="m1")])
    html = create_app(tmp_path / "x", watch=False).test_client().get("/s/x/messages/m2").get_data(as_text=True)
    assert "<script>x()" not in html and "&lt;script&gt;x()&lt;/script&gt;" in html


def test_hook_audit_windows_each_agents_diffs(hooked_client):
    data = hooked_client.get("/api/sessions/hooked/hooks?limit=1").get_json()
    assert [(g["agent_id"], g["count"], [d["message_id"] for d in g["deliveries"]]) for g in data["groups"]] == [
        ("jack", 1, ["m8"]), ("jill", 2, ["m5"])]
    doc = parse(hooked_client.get("/s/hooked/hooks?limit=1").data)
    later = [a for a in doc.find_all("a") if a.text == "later →"]
    assert [a.attrs["href"] for a in later] == ["/s/hooked/hooks?agent=jill&start=1&limit=1"]
    page2 = parse(hooked_client.get(later[0].attrs["href"]).data)
    (jill,) = page2.find_all("section", data_agent="jill")
    assert [d.attrs["id"] for d in jill.find_all("div") if d.attrs.get("id", "").startswith("av-prov-")] == ["av-prov-m9"]
    assert hooked_client.get("/s/hooked/hooks?agent=nobody").status_code == 404


def test_a_delivery_quoting_part_of_its_original_is_diffed_against_that_part(tmp_path):
    """A Claude Code sub-agent's prompt is one argument of its spawning call: the diff and the
    modified flag compare the same text (the quoted part), as the dialog does."""
    import shutil

    from conftest import SAMPLES
    from viewer.reads import queries
    from viewer.library.library import Library

    shutil.copytree(SAMPLES / "claude_code", tmp_path / "projects", ignore=shutil.ignore_patterns("*.py"))
    library = Library(tmp_path / "projects")
    library.scan()
    s = library.get("-home-dev-src-parser:5b1e8c2a-audit")
    data = provenance.delivery_provenance(s, s.by_id["a11ce5ca-0001"])
    quoted = s.event("a11ce5ca-0001")["original_text"]
    assert data["modified"] is False and data["original"] == quoted
    assert data["counts"] == {"deleted": 0, "inserted": 0}
    dialog_delivery = queries.delivery_of(s, s.event("a11ce5ca-0001"))
    assert data["original"] == dialog_delivery["original_content"]


def test_hook_audit_of_many_receivers_shows_a_window_of_agents(tmp_path):
    from viewer.web.app import create_app

    events = [created("m0", "root"), say("s0", "root", "the pin is 1234")]
    for i in range(25):
        events += [created(f"c{i}", f"a{i:02}", cause="s0"), user(f"d{i}", f"a{i:02}", "the pin is [REDACTED]", substance="s0")]
    write_events(tmp_path / "many" / "many.jsonl", events)
    client = create_app(tmp_path / "many", watch=False).test_client()
    doc = parse(client.get("/s/many/hooks").data)
    assert len(doc.by_id("av-hook-counts").find_all("tr")[1:]) == 25  # every agent counted
    assert [s.attrs["data-agent"] for s in doc.find_all("section")] == [f"a{i:02}" for i in range(10)]
    later = [a for a in doc.by_id("av-hook-groups").find_all("a") if a.text == "later agents →"]
    page2 = parse(client.get(later[0].attrs["href"]).data)
    assert [s.attrs["data-agent"] for s in page2.find_all("section")] == [f"a{i:02}" for i in range(10, 20)]
    earlier = [a for a in page2.by_id("av-hook-groups").find_all("a") if a.text == "← earlier agents"]
    page1 = parse(client.get(earlier[0].attrs["href"]).data)  # back by one window of agents, not a fixed count
    assert [s.attrs["data-agent"] for s in page1.find_all("section")] == [f"a{i:02}" for i in range(10)]
    data = client.get("/api/sessions/many/hooks?from=20").get_json()
    assert [g["agent_id"] for g in data["groups"]] == [f"a{i:02}" for i in range(20, 25)]
    assert (data["groups_total"], len(data["agents"]), data["modified"]) == (25, 25, 25)
