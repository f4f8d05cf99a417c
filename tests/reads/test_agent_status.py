"""A sub-agent's status (reads/queries.py: agent_status): running until the call that created it is answered, then done or
failed; stopped when the session ended without an answer; none in a format that never answers such a call. The
session's JSON, its tree and an agent page's rail all say the same."""

import json
import os
import time

from claude_lines import Transcript
from conftest import write_events
from dom import parse
from events import calls, created, result, say, tool_call
from viewer.web.app import create_app

SESSION = "5e55a0b1-status"
SID = f"-home-dev-app:{SESSION}"
SPAWN = {"type": "tool_use", "id": "toolu_A", "name": "Task",
         "input": {"description": "Scan", "subagent_type": "Explore", "prompt": "List the entry points"}}


def write_team(folder, answer: dict | None = None, *, hours_ago: float = 0, later_calls: tuple = ()):
    """main asks a sub-agent (agent-ab12) to scan; `answer`: the tool_result block answering its Task call;
    `later_calls`: tool_use blocks main sends after it, a response each."""
    project = folder / "-home-dev-app"
    main = Transcript(SESSION, "mn")
    main.user("Audit the parser")
    main.response("msg_1", [SPAWN])
    for number, call in enumerate(later_calls, 3):
        main.response(f"msg_{number}", [call])
    main.n = 20  # after the sub-agent's lines
    if answer is not None:
        main.user([{"type": "tool_result", "tool_use_id": "toolu_A", **answer}])
    paths = [main.write(project / f"{SESSION}.jsonl")]
    sub = Transcript(SESSION, "sb")
    sub.n = 10
    sub.user("List the entry points", isSidechain=True, agentId="ab12")
    sub.response("msg_2", [{"type": "text", "text": "parse() and lex()"}])
    subagents = project / SESSION / "subagents"
    paths.append(sub.write(subagents / "agent-ab12.jsonl"))
    (subagents / "agent-ab12.meta.json").write_text(json.dumps({"agentType": "Explore", "description": "Scan",
                                                               "toolUseId": "toolu_A"}))
    if hours_ago:
        then = time.time() - hours_ago * 3600
        for path in [*paths, subagents / "agent-ab12.meta.json"]:
            os.utime(path, (then, then))
    return paths


def statuses(client, sid=SID):
    agents = client.get(f"/api/sessions/{sid}").get_json()["agents"]
    return {a["agent_id"]: a["status"] for a in agents}


def shown(client, url: str, where: str, sid=SID) -> dict[str, str]:
    """agent id -> the status its row shows, in the element `where` of the page at `url`."""
    ordinals = {a["ordinal"]: a["agent_id"] for a in client.get(f"/api/sessions/{sid}").get_json()["agents"]}
    badges = [s for s in parse(client.get(url).data).by_id(where).find_all("span")
              if "agent-status" in s.attrs.get("class", "")]
    return {ordinals[int(s.attrs["id"].removeprefix("av-status-"))]: s.text for s in badges}


def test_a_sub_agent_whose_call_has_no_result_yet_is_running(tmp_path):
    write_team(tmp_path)
    client = create_app(tmp_path, watch=False).test_client()
    assert statuses(client) == {"main": None, "agent-ab12": "running"}
    assert shown(client, f"/s/{SID}", "av-tree") == {"agent-ab12": "running"}
    assert shown(client, f"/s/{SID}/agents/main", "av-agent-tree") == {"agent-ab12": "running"}


def test_its_result_makes_it_done_and_an_error_result_failed(tmp_path):
    write_team(tmp_path / "ok", {"content": "parse() and lex()"})
    write_team(tmp_path / "bad", {"content": "Agent crashed: out of memory", "is_error": True})
    ok = create_app(tmp_path / "ok", watch=False).test_client()
    bad = create_app(tmp_path / "bad", watch=False).test_client()
    assert statuses(ok) == {"main": None, "agent-ab12": "done"}
    assert statuses(bad) == {"main": None, "agent-ab12": "failed"}
    assert shown(bad, f"/s/{SID}/agents/agent-ab12", "av-agent-tree") == {"agent-ab12": "failed"}


def test_a_session_that_ended_without_the_result_left_its_sub_agent_stopped(tmp_path):
    write_team(tmp_path, hours_ago=2)  # longer ago than a session takes to settle
    client = create_app(tmp_path, watch=False).test_client()
    assert statuses(client) == {"main": None, "agent-ab12": "stopped"}
    page = parse(client.get(f"/s/{SID}").data).by_id("av-tree")
    badge = next(s for s in page.find_all("span") if "agent-status" in s.attrs.get("class", ""))
    assert badge.attrs["title"] == "the session ended before its result came"


def test_a_native_session_gives_no_status_even_with_a_result(tmp_path):
    write_events(tmp_path / "team.jsonl", [
        created("m0", "root"), calls("m1", "root", tool_call("t1", "task", name="Writer")),
        created("m2", "writer", cause="m1", name="Writer"), say("m3", "writer", "a draft"),
        result("m4", "root", "t1", "Writer finished")])
    client = create_app(tmp_path, watch=False).test_client()
    assert statuses(client, "team") == {"root": None, "writer": None}  # seed-000 never has to answer `task`
    assert shown(client, "/s/team", "av-tree", "team") == {}


def test_a_poll_swaps_in_the_status_of_a_sub_agent_whose_call_was_just_answered(tmp_path):
    main, _ = write_team(tmp_path)
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    cursor = client.get(f"/api/sessions/{SID}").get_json()["cursor"]
    polled = client.get(f"/s/{SID}/poll/tree?after={cursor}")
    assert b"av-status-" not in polled.data  # nothing answered since
    answer = Transcript(SESSION, "an")
    answer.n = 30
    answer.user([{"type": "tool_result", "tool_use_id": "toolu_A", "content": "parse() and lex()"}])
    with main.open("a") as f:
        f.write(answer.text())
    app.extensions["agentview"].library.scan()
    for url in (f"/s/{SID}/poll/tree?after={cursor}", f"/s/{SID}/poll/agent?agent=agent-ab12&after={cursor}"):
        swapped = [s for s in parse(client.get(url).data).find_all("span") if s.attrs.get("id", "").startswith("av-status-")]
        assert [(s.text, s.attrs.get("hx-swap-oob")) for s in swapped] == [("done", "true")], url


def test_a_poll_swaps_in_only_the_sub_agents_answered_since_its_cursor(tmp_path):
    """Two sub-agents: the first answered before the cursor, the second after it, beside a result of a call that
    created nobody. Only the second is swapped in."""
    project = tmp_path / "-home-dev-app"
    main = Transcript(SESSION, "mn")
    main.user("Audit the parser")
    main.response("msg_1", [SPAWN])
    main.response("msg_2", [{**SPAWN, "id": "toolu_B", "input": {**SPAWN["input"], "description": "Lint"}}])
    main.n = 20
    main.result("toolu_A", "parse() and lex()")
    main.write(project / f"{SESSION}.jsonl")
    subagents = project / SESSION / "subagents"
    for agent, call in (("ab12", "toolu_A"), ("cd34", "toolu_B")):
        sub = Transcript(SESSION, f"s{agent}")
        sub.n = 10
        sub.user(f"Work {agent}", isSidechain=True, agentId=agent)
        sub.write(subagents / f"agent-{agent}.jsonl")
        (subagents / f"agent-{agent}.meta.json").write_text(json.dumps({"agentType": "Explore", "toolUseId": call}))
    app = create_app(tmp_path, watch=False)
    client = app.test_client()
    assert {a: s for a, s in statuses(client).items() if s} == {"agent-ab12": "done", "agent-cd34": "running"}
    cursor = client.get(f"/api/sessions/{SID}").get_json()["cursor"]
    later = Transcript(SESSION, "lt")
    later.n = 30
    later.response("msg_3", [{"type": "tool_use", "id": "toolu_C", "name": "Bash", "input": {"command": "ls"}}])
    later.result("toolu_C", "src tests")
    later.result("toolu_B", "no warnings")
    with (project / f"{SESSION}.jsonl").open("a") as f:
        f.write(later.text())
    app.extensions["agentview"].library.scan()
    ordinals = {a["agent_id"]: a["ordinal"] for a in client.get(f"/api/sessions/{SID}").get_json()["agents"]}
    swapped = [(s.attrs["id"], s.text) for s in parse(client.get(f"/s/{SID}/poll/tree?after={cursor}").data)
               .find_all("span") if s.attrs.get("id", "").startswith("av-status-")]
    assert swapped == [(f"av-status-{ordinals['agent-cd34']}", "done")]


def test_a_page_drawn_while_its_sub_agent_ran_is_told_once_the_session_ends(tmp_path):
    """The end comes with no event (an hour of quiet; a second here): a page drawn before it polls with ?ended=0,
    and its next poll swaps the sub-agent's status to stopped, then polls with ?ended=1 and hears nothing more."""
    from viewer.core.tuning import Tuning

    write_team(tmp_path)
    drawn = time.time()
    app = create_app(tmp_path, watch=False, tuning=Tuning(settle_after=1.0))
    client = app.test_client()
    pages = {"tree": f"/s/{SID}", "rail": f"/s/{SID}/agents/main"}
    polls = {name: parse(client.get(url).data).by_id("av-poller").attrs["hx-get"] for name, url in pages.items()}
    assert shown(client, pages["tree"], "av-tree") == {"agent-ab12": "running"}
    assert all("ended=0" in poll for poll in polls.values()), polls
    assert [client.get(poll).status_code for poll in polls.values()] == [204, 204]  # not ended yet: nothing new
    time.sleep(max(0.0, drawn + 1.2 - time.time()))
    for name, poll in polls.items():
        answer = parse(client.get(poll).data)
        swapped = [(s.text, s.attrs.get("hx-swap-oob")) for s in answer.find_all("span")
                   if s.attrs.get("id", "").startswith("av-status-")]
        assert swapped == [("stopped", "true")], name
        following = answer.by_id("av-poller").attrs["hx-get"]
        assert "ended=1" in following and client.get(following).status_code == 204, name


def test_a_page_drawn_before_the_session_ended_is_told_its_unanswered_call_failed(tmp_path):
    """A call left without a result counts as a failure once the session ends: the page's next poll swaps in its
    agent's new failure count."""
    from viewer.core.tuning import Tuning

    write_events(tmp_path / "run.jsonl", [created("m0", "root"), say("m1", "root", "go"),
                                          calls("m2", "root", tool_call("c1", "fetch")),
                                          result("m3", "root", "c1", "Error: 503", name="fetch"),
                                          calls("m4", "root", tool_call("c2", "fetch"))])
    drawn = time.time()
    client = create_app(tmp_path, watch=False, tuning=Tuning(settle_after=1.0)).test_client()
    page = parse(client.get("/s/run").data)
    ordinal = client.get("/api/sessions/run").get_json()["agents"][0]["ordinal"]
    assert "1 failed" in page.by_id(f"av-failures-{ordinal}").text
    time.sleep(max(0.0, drawn + 1.2 - time.time()))
    swapped = parse(client.get(page.by_id("av-poller").attrs["hx-get"]).data).by_id(f"av-failures-{ordinal}")
    assert swapped.attrs.get("hx-swap-oob") == "true" and "2 failed" in swapped.text


def test_a_failed_result_is_told_alike_from_the_facets_and_from_the_entry_itself(tmp_path):
    """failed.failed_at reads the facets' failed entries where they hold the entry (no read of it), else the entry."""
    from viewer.index import failed

    write_team(tmp_path, {"content": "Agent crashed: out of memory", "is_error": True})
    app = create_app(tmp_path, watch=False)
    s = app.extensions["agentview"].library.listing()[0]
    with s.lock:
        told = [failed.kind_at(s, p) is not None for p in range(s.count)]
        assert any(told) and s.facets.indexed == 0
        assert [failed.failed_at(s, p) for p in range(s.count)] == told  # facets not built: each entry read
        s.facets.catch_up(s.count)
        assert [failed.failed_at(s, p) for p in range(s.count)] == told
    assert statuses(app.test_client()) == {"main": None, "agent-ab12": "failed"}


def test_a_session_that_ends_while_its_page_is_made_sums_its_sub_agents_as_stopped(tmp_path):
    """The tree's sums take the statuses the page's agents were listed with; an end that came meanwhile (with time,
    no event) is not summed as still running."""
    from viewer.core.tuning import Tuning
    from viewer.reads import queries
    from viewer.web import tree_outline

    write_team(tmp_path)
    app = create_app(tmp_path, watch=False, tuning=Tuning(settle_after=1.0))
    s = app.extensions["agentview"].library.get(SID)
    with s.lock:
        listed = {agent["agent_id"]: agent for agent in queries.agents(s)}
    assert listed["agent-ab12"]["status"] == "running"
    time.sleep(1.2)
    with app.test_request_context(), s.lock:
        assert tree_outline.sums(s, listed).statuses == {"agent-ab12": "stopped"} == queries.agent_statuses(s)
