"""The Failures page and its JSON twin: one view, windows and an agent's subtree, each failure linked to its entry
and its call; a call left unanswered is marked on its agent page; log text escaped and masked."""

import os
import re
import time

from conftest import write_events
from events import calls, created, result, tool_call, user

from viewer.web.app import create_app

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwx1234567890"


def run_folder(tmp_path, ended=True):
    events = [created("m0", "root", name="root"), user("m1", "root", "go"),
              calls("m2", "root", tool_call("c1", "task", name="kid")), created("m3", "kid", cause="m2", name="kid")]
    for i in range(5):  # five failures of the kid's, one of the root's, one call of the root's never answered
        events += [calls(f"k{i}", "kid", tool_call(f"x{i}", "run")),
                   result(f"r{i}", "kid", f"x{i}", f"Error: <b>step {i}</b> failed, key {SECRET}\nmore", name="run")]
    events += [calls("m4", "root", tool_call("c2", "fetch")), result("m5", "root", "c2", "Error: 503", name="fetch"),
               calls("m6", "root", tool_call("c3", "fetch"))]
    path = write_events(tmp_path / "s" / "run.jsonl", events)
    if ended:
        stamp = time.time() - 7200
        os.utime(path, (stamp, stamp))
    return create_app(tmp_path / "s", watch=False).test_client()


def test_the_json_twin_pages_and_narrows_to_an_agent(tmp_path):
    client = run_folder(tmp_path)
    whole = client.get("/api/sessions/run/failures").json
    assert whole["total"] == 7 and whole["agents"] == {"kid": 5, "root": 2} and whole["next"] is None
    assert [f["kind"] for f in whole["failures"]] == ["tool error"] * 6 + ["unanswered"]
    first = whole["failures"][0]
    assert (first["message_id"], first["call_message_id"], first["call_id"], first["tool"]) == ("r0", "k0", "x0", "run")
    assert first["url"] == "/s/run/messages/r0" and first["call_url"] == "/s/run/messages/k0"
    assert SECRET not in str(whole) and first["error"].startswith("Error: <b>step 0</b> failed, key ")
    window = client.get("/api/sessions/run/failures?start=2&limit=2").json
    assert [f["message_id"] for f in window["failures"]] == ["r2", "r3"]
    assert window["next"] == "/api/sessions/run/failures?start=4&limit=2"
    kid = client.get("/api/sessions/run/failures?agent=kid").json
    assert kid["total"] == 5 and kid["agent"] == "kid" and {f["agent_id"] for f in kid["failures"]} == {"kid"}
    assert client.get("/api/sessions/run/failures?agent=nobody").status_code == 404


def test_the_page_escapes_and_masks_the_error_and_links_each_entry(tmp_path):
    client = run_folder(tmp_path)
    page = client.get("/s/run/failures").get_data(as_text=True)
    assert page.count('class="failure"') == 7 and 'href="/s/run/messages/r4"' in page
    assert "<b>step" not in page and "&lt;b&gt;step 0&lt;/b&gt;" in page and SECRET not in page


def test_a_call_left_unanswered_is_marked_once_the_session_ended(tmp_path):
    ended = run_folder(tmp_path / "a").get("/s/run/agents/root").get_data(as_text=True)
    assert ended.count('class="call failed"') == 2 and '<span class="badge failed" title="no result' in ended
    going = run_folder(tmp_path / "b", ended=False)
    assert going.get("/s/run/agents/root").get_data(as_text=True).count('class="call failed"') == 1
    assert going.get("/api/sessions/run/failures").json["total"] == 6  # it may still be answered


def test_the_tree_s_live_poll_counts_an_agent_s_new_failures(tmp_path):
    """A failure logged after the tree was drawn updates its agent's badge and its parents' (out of band); an agent
    that had none gets one."""
    client = run_folder(tmp_path, ended=False)

    def badges(after: str) -> dict:
        text = client.get(f"/s/run/poll/tree?after={after}").get_data(as_text=True)
        found = re.findall(r'<span id="av-failures-(\d+)" hx-swap-oob="true">(.*?)</span>', text, re.S)
        return {ordinal: re.sub(r"<[^>]*>", "", inner) for ordinal, inner in found}

    assert badges("0-4") == {"0": "6 failed", "1": "5 failed"}  # drawn before any failure: root 0, kid 1
    assert badges("0-15") == {"0": "6 failed"}  # only the root's failed fetch is new
    assert badges("0-16") == {"0": "6 failed"}  # its call c3, not answered yet, is no failure


def test_the_session_trees_failures_badges_link_each_agents_failures_whatever_its_id(tmp_path):
    from dom import parse

    odd = "kid &<b>?x=1#y"
    events = [created("m0", "root", name="root"), calls("m1", "root", tool_call("c1", "task", name=odd)),
              created("m2", odd, cause="m1", name="kid"), calls("k0", odd, tool_call("x0", "run")),
              result("r0", odd, "x0", "Error: broke", name="run")]
    write_events(tmp_path / "s" / "odd.jsonl", events)
    client = create_app(tmp_path / "s", watch=False).test_client()
    links = parse(client.get("/s/odd").data).by_id("av-tree").find_all("a")
    badges = [a for a in links if "node-failures" in a.attrs.get("class", "")]
    assert [b.text for b in badges] == ["1 failed", "1 failed"]  # the root's counts its sub-agent's
    kid = client.get(badges[1].attrs["href"].replace("/s/odd/failures", "/api/sessions/odd/failures")).json
    assert kid["agent"] == odd and kid["total"] == 1
