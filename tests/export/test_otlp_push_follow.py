"""`agentview push --follow` against a real OTLP/HTTP receiver while the log is appended to: a tool call's span
goes once, complete, when its result is logged (within 2 s of the append); one that never gets a result goes
when the push stops, marked unfinished. And a store that answers 429/503 is retried, nothing lost or doubled."""

from __future__ import annotations

import subprocess
import sys
import time

from conftest import REPO, wait_for, write_events
from events import calls, created, result, say, tool_call, user
from otlp_receiver import assert_clean_exit, receiver, stop  # noqa: F401 (receiver: a fixture)
from viewer.export import otlp, push
from viewer.reads.session_viewer import load_index


def names(receiver) -> list[str]:
    return [span["name"] for span in receiver.spans]


def arrived_within(receiver, seconds: float, found) -> dict:
    """The first span `found` accepts, failing when none arrives within `seconds`."""
    def hit():
        with receiver.lock:
            return next((span for span in receiver.spans if found(span)), None)
    return wait_for(hit, timeout=seconds)


def message(message_id: str):
    return lambda span: span["attributes"].get("agentview.message_id") == message_id


def test_follow_sends_a_tool_span_once_with_its_result(receiver, tmp_path):
    path = write_events(tmp_path / "live.jsonl", [
        created("m1", "a", name="A"),
        user("m2", "a", "read it"),
        calls("m3", "a", tool_call("c1", tool="read_file", path="notes.txt"), content="reading"),
    ])
    process = subprocess.Popen([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", receiver.url,
                                "--follow"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        receiver.wait_for(3)  # the agent, the user message, the chat span
        assert names(receiver) == ["invoke_agent A", "message user", "chat"]
        # the call has no result yet: its span waits (a later poll, which sends a later event, sends nothing of it)
        write_events(path, [say("m3b", "a", "still reading")], mode="a")
        arrived_within(receiver, 2.0, message("m3b"))
        assert "execute_tool read_file" not in names(receiver)

        write_events(path, [result("m4", "a", "c1", "the notes", name="read_file")], mode="a")
        tool = arrived_within(receiver, 2.0, lambda span: span["name"] == "execute_tool read_file")
        assert tool["attributes"]["gen_ai.tool.call.result"] == "the notes"
        assert "agentview.unfinished" not in tool["attributes"]
        answer = arrived_within(receiver, 2.0, lambda span: span["attributes"].get("agentview.message_id") == "m4")
        assert answer["parentSpanId"] == tool["spanId"]

        # a call answered in the same append goes at once; one never answered waits for the end of the push
        write_events(path, [calls("m5", "a", tool_call("c2", tool="search"), tool_call("c3", tool="run")),
                            result("m6", "a", "c2", "found", name="search"), say("m7", "a", "done")], mode="a")
        search = arrived_within(receiver, 2.0, lambda span: span["name"] == "execute_tool search")
        assert search["attributes"]["gen_ai.tool.call.result"] == "found"
        arrived_within(receiver, 2.0, message("m7"))
        write_events(path, [say("m8", "a", "waiting")], mode="a")  # a later poll: it sends m8, not the call
        arrived_within(receiver, 2.0, message("m8"))
        assert "execute_tool run" not in names(receiver)
        assert process.poll() is None
    finally:
        stderr = stop(process)
    assert_clean_exit(process, stderr)
    run = [span for span in receiver.spans if span["name"] == "execute_tool run"]
    assert len(run) == 1 and run[0]["attributes"]["agentview.unfinished"] is True
    assert "gen_ai.tool.call.result" not in run[0]["attributes"]
    # each span once, but the agent's: sent again, same id, as it grows (test_follow_grows_...)
    ids = [span["spanId"] for span in receiver.spans if span["name"] != "invoke_agent A"]
    assert len(ids) == len(set(ids)) == 11  # m2, m3, m3b, m4, m5, m6, m7 (a chat), m8 and the three tools
    assert len({span["spanId"] for span in receiver.spans if span["name"] == "invoke_agent A"}) == 1
    assert sorted(span["name"] for span in receiver.spans if span["name"].startswith("execute_tool")) == [
        "execute_tool read_file", "execute_tool run", "execute_tool search"]


def test_a_tool_span_waiting_past_its_bound_goes_unfinished_once(receiver, tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), calls("m2", "a", tool_call("c1"))])
    _, read = push.sessions_at(str(path))
    pusher = push.Pusher(push.HttpStore(receiver.url), follow=True, hold_seconds=0)  # no wait at all
    pusher.push(read())
    assert names(receiver) == ["invoke_agent A", "chat", "execute_tool task"]
    assert receiver.spans[-1]["attributes"]["agentview.unfinished"] is True
    write_events(path, [result("m3", "a", "c1", "late")], mode="a")
    pusher.push(read())  # the result comes as its own span; the call's span not again
    pusher.finish()  # and the agent's span again, now ending at its last entry
    assert names(receiver) == ["invoke_agent A", "chat", "execute_tool task", "message tool", "invoke_agent A"]


def test_a_store_that_asks_to_wait_is_retried_and_gets_everything_once(receiver, tmp_path):
    receiver.script = [(429, {"Retry-After": "0"}), (503, {}), (502, {})]
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), user("m2", "a", "hi"),
                                               say("m3", "a", "hello")])
    done = subprocess.run([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", receiver.url],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert receiver.requests == 4
    assert names(receiver) == ["invoke_agent A", "message user", "chat"]


def first_copies(receiver) -> list[str]:
    """The span ids in the order the receiver took them, each at its first copy."""
    seen: dict[str, None] = {}
    for span in receiver.spans:
        seen.setdefault(span["spanId"], None)
    return list(seen)


def test_follow_delivers_a_sessions_requests_in_the_order_they_were_made(receiver, tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    _, read = push.sessions_at(str(path))
    # small requests: each append goes in several, which two senders would otherwise send side by side
    pusher = push.Pusher(push.HttpStore(receiver.url), follow=True, max_request_bytes=1500)
    pusher.push(read())
    for round_ in range(3):
        write_events(path, [say(f"r{round_}-{i}", "a", f"answer {i} " + "x" * 200) for i in range(12)]
                     + [created(f"k{round_}", f"kid{round_}", cause="m2", name=f"Kid{round_}"),
                        say(f"k{round_}-say", f"kid{round_}", "hello")], mode="a")
        # the receiver holds the first requests of the round: a later request sent beside one overtakes it
        receiver.delays = [0.3, 0, 0.2, 0, 0.1]
        requests = receiver.requests
        pusher.push(read())
        assert receiver.requests - requests >= 4
    pusher.finish()
    s = load_index(path)
    with s.lock:
        made = [span.span_id.hex() for span in otlp.SpanBuilder(s).spans()]
    assert first_copies(receiver) == made


def test_follow_grows_an_agents_span_as_the_agent_goes_on(receiver, tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    _, read = push.sessions_at(str(path))
    pusher = push.Pusher(push.HttpStore(receiver.url), follow=True, resend_seconds=0.5)
    first_sent = time.monotonic()
    pusher.push(read())
    write_events(path, [say("m3", "a", "working"), created("m4", "b", cause="m3", name="B"),
                        user("m5", "b", "task")], mode="a")
    pusher.push(read())  # within resend_seconds of A's span: no copy yet
    assert names(receiver).count("invoke_agent A") == 1
    # nothing new, but A grew since its span went: a copy at the first push resend_seconds after it

    def copied():
        pusher.push(read())
        return names(receiver).count("invoke_agent A") == 2
    wait_for(copied, timeout=5)
    assert time.monotonic() - first_sent >= 0.5
    pusher.push(read())  # and only once
    assert names(receiver).count("invoke_agent A") == 2
    write_events(path, [say("m6", "b", "done"), say("m7", "a", "thanks"), say("m8", "a", "bye")], mode="a")
    pusher.push(read())
    pusher.finish()  # the end of the push: every agent that grew, at once
    by_agent: dict[str, list[dict]] = {}
    for span in receiver.spans:
        by_agent.setdefault(span["attributes"]["gen_ai.agent.id"], []).append(span)
    assert set(by_agent) == {"a", "b"}
    for agent, spans in by_agent.items():
        copies = [span for span in spans if span["name"].startswith("invoke_agent")]
        others = [span for span in spans if not span["name"].startswith("invoke_agent")]
        assert len({span["spanId"] for span in copies}) == 1  # one span id per agent
        assert [span["start"] for span in copies] == [copies[0]["start"]] * len(copies)
        ends = [span["end"] for span in copies]
        assert ends == sorted(ends)  # the copies arrive oldest first
        assert ends[-1] >= max(span["start"] for span in others)  # the last copy ends at its last event or later
    assert len(by_agent["a"]) - 4 == 3 and len(by_agent["b"]) - 2 == 2  # A: 3 copies; B: 2 (its first, the end)
    assert all(span["end"] >= span["start"] for span in receiver.spans)


def test_agentview_push_follow_sends_a_grown_agent_span_within_the_resend_interval(receiver, tmp_path):
    path = write_events(tmp_path / "live.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    process = subprocess.Popen([sys.executable, "-m", "viewer", "push", str(path), "--endpoint", receiver.url,
                                "--follow"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = arrived_within(receiver, 30, lambda span: span["name"] == "invoke_agent A")
        write_events(path, [say("m3", "a", "later")], mode="a")
        said = arrived_within(receiver, 2.0, lambda span: span["attributes"].get("agentview.message_id") == "m3")
        # the copy waits out RESEND_SECONDS (2 s) from the first, then goes at the next poll
        grown = arrived_within(receiver, 4.0, lambda span: span["name"] == "invoke_agent A" and span is not first)
        assert grown["spanId"] == first["spanId"] and grown["start"] == first["start"]
        assert grown["end"] >= said["start"] > first["end"]
        assert grown["arrived"] - first["arrived"] >= 1.9
    finally:
        stderr = stop(process)
    assert_clean_exit(process, stderr)
    copies = [span for span in receiver.spans if span["name"] == "invoke_agent A"]
    assert len(copies) == 2  # nothing new after the copy: none at the end either


def test_an_agent_span_copy_never_covers_an_event_not_sent(receiver, tmp_path):
    path = write_events(tmp_path / "s.jsonl", [created("m1", "a", name="A"), user("m2", "a", "go")])
    _, read = push.sessions_at(str(path))
    pusher = push.Pusher(push.HttpStore(receiver.url), follow=True)
    pusher.push(read())
    write_events(path, [say("m3", "a", "sent")], mode="a")
    pusher.push(read())
    write_events(path, [say("m4", "a", "read but never pushed")], mode="a")
    read()  # the session has m4 now; the push stops before sending it
    pusher.finish()
    copies = [span for span in receiver.spans if span["name"] == "invoke_agent A"]
    m3 = next(span for span in receiver.spans if span["attributes"].get("agentview.message_id") == "m3")
    assert len(copies) == 2 and copies[-1]["end"] == m3["start"]
    assert "m4" not in {span["attributes"].get("agentview.message_id") for span in receiver.spans}
