"""ai-agent opTree snapshots (seed 002): sessions as agents, turns and operations as entries, re-read on replace."""

import gzip
import json
import os

import pytest

from events import copy_samples, scanned
from viewer.reads import dialogs, queries

FINAL, PARTIAL = "4b9e-web-research.json.gz", "7d21-stock-check.json"


@pytest.fixture
def folder(tmp_path):
    return copy_samples("ai_agent", tmp_path / "ai")


@pytest.fixture
def library(folder):
    return scanned(folder)


def test_child_sessions_are_sub_agents(library):
    s = library.get(FINAL)
    assert s.format.name == "ai-agent" and s.problems == []
    (root,) = queries.tree(s)
    assert (root["agent_id"], root["name"]) == ("sess-root", "web-research")
    assert [(c["agent_id"], c["name"]) for c in root["children"]] == [("sess-child-1", "summarizer")]
    assert root["created_by"] is None and root["children"][0]["created_by"]["tool"] == "agent__summarizer"


def test_transcript_shows_turns_llm_and_paired_tool_operations(library):
    s = library.get(FINAL)
    view = queries.perspective(s, "sess-root")
    kinds = [(i["kind"], (i["event"].get("markers") or [None])[0]) for i in view["items"]]
    assert kinds == [("system", "turn 0"), ("heard", "turn 1"), ("said", None), ("did", None), ("did", None),
                     ("system", "turn 2"), ("did", None), ("said", None)]
    llm = s.event("op-1")
    assert llm["model"] == "anthropic/claude-sonnet-4-5" and llm["cost_usd"] == 0.009 and llm["latency_ms"] == 880
    assert llm["usage"]["input_tokens"] == 1500 and llm["thinking"] == ["I should search the web and the docs in parallel."]
    failed = view["items"][4]["calls"][0]["results"][0]
    assert failed["content"] == "HTTP 503 Service Unavailable" and s.event("op-3:result")["is_error"]
    assert {l["severity"] for l in s.event("op-3:call")["logs"]} == {"VRB", "TRC", "ERR"}
    assert s.format_summary["costUsd"] == 0.0213 and s.format_summary["agentsRun"] == 1


def test_substance_links_and_dialog_across_sessions(library):
    s = library.get(FINAL)
    assert s.event("sess-child-1:turn1:user")["substance"] == "op-4:call"
    assert s.event("op-4:result")["substance"] == "op-c1"
    dialog = dialogs.dialog(s, ["sess-root", "sess-child-1"])
    answer = next(i for i in dialog["items"] if i["message_id"] == "op-c1")
    assert answer["content"] == "Netdata monitors systems; ai-agent runs its AI agents."
    request = next(i for i in dialog["items"] if i["message_id"] == "op-4:call")
    assert request["recipients"] == ["sess-child-1"] and not request["deliveries"][0]["modified"]


def test_unfinished_nodes_are_in_progress(library):
    s = library.get(PARTIAL)
    assert s.format_summary["in_progress"] and s.format_summary["reason"] == "subagent_finish"
    assert "in_progress" in s.agents["sess-stock"].flags and "in_progress" in s.agents["sess-child-2"].flags
    assert "in progress" in s.event("op-s3:call")["markers"]
    assert s.event("op-s3:call") and s.event("op-s3:result") is None


def test_replaced_snapshot_is_read_again(folder, library):
    s = library.get(PARTIAL)
    data = json.loads((folder / PARTIAL).read_text())
    child = data["opTree"]["turns"][0]["ops"][2]
    child.update(endedAt=1767261609000, status="ok", response={"payload": "W-1 costs 4 EUR"})
    data["opTree"]["endedAt"] = 1767261610000
    temporary = folder / "7d21-stock-check.json.tmp"
    temporary.write_text(json.dumps(data))
    os.replace(temporary, folder / PARTIAL)
    library.refresh(str(folder / PARTIAL))
    assert s.epoch == 1 and s.event("op-s3:result")["content"] == "W-1 costs 4 EUR"
    assert "in_progress" not in s.agents["sess-stock"].flags


def test_gzip_and_other_json_files(folder):
    with gzip.open(folder / "copy.json.gz", "wt") as f:
        json.dump(json.loads((folder / PARTIAL).read_text()), f)
    (folder / "settings.json").write_text('{"theme": "dark"}')
    (folder / "agent-x.meta.json").write_text('{"agentType": "Explore"}')
    library = scanned(folder)
    assert library.get("copy.json.gz").format.name == "ai-agent"
    other = library.get("settings.json")
    assert other.format.name == "unrecognized" and "opTree" in other.format_reason and other.count == 0
    assert library.get("agent-x.meta.json") is None


def test_secrets_in_trace_logs_are_masked_on_the_page(folder):
    from viewer.web.app import create_app

    client = create_app(folder, watch=False).test_client()
    page = client.get(f"/s/{FINAL}/agents/sess-root").data.decode()
    assert "TRC" in page and "Authorization" in page
    assert "sk-live-0123456789abcdefghij" not in page and "abcdef0123456789" not in page
    api = client.get(f"/api/sessions/{FINAL}").json
    assert api["format"] == "ai-agent" and api["format_summary"]["toolsRun"] == 3


def test_the_session_page_shows_session_turns_and_operations(folder):
    from viewer.web.app import create_app
    from dom import parse

    client = create_app(folder, watch=False).test_client()
    doc = parse(client.get(f"/s/{FINAL}").data)
    tree = doc.by_id("av-op-tree")
    turns = [" ".join(li.text.split())[:6] for li in tree.find_all("li") if li.attrs.get("class") == "op-turn"]
    assert turns == ["turn 0", "turn 1", "turn 2", "turn 1"]  # the child's turn nests under its session op
    ops = [li for li in tree.find_all("li") if "op " in li.attrs.get("class", "") + " "]
    assert any("web_search" in li.text and "ok" in li.text for li in ops)
    assert any("fetch_docs" in li.text and "failed" in li.text for li in ops)
    partial = parse(client.get(f"/s/{PARTIAL}").data).by_id("av-op-tree")
    assert "in progress" in partial.text and "price-lookup" in partial.text


def test_snapshot_title(library):
    assert library.get(FINAL).title == "What is netdata ai-agent?"
