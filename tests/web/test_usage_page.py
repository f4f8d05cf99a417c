"""The usage page and GET /api/usage: tokens and cost by day, project, model and agent CLI across a folder's
sessions, the window following the data's own dates, and the sessions behind each bar."""

from __future__ import annotations

import os
import shutil
import urllib.request

import orjson
import pytest
from claude_lines import Transcript
from conftest import SAMPLES, serve, wait_for
from dom import parse
from test_cache_store import kept_entries

from viewer.web.app import create_app

# (project folder, session, [(UTC time, model as the log spells it, input, output, cache read)])
PLANTED = [
    ("alpha", "a1000000-0000-4000-8000-000000000001", [
        ("2025-03-03T10:00:00.000Z", "claude-sonnet-4-5-20250929", 1000, 100, 5000),
        ("2025-03-03T11:30:00.000Z", "claude-sonnet-4-5-20250929", 2000, 200, 0),
        ("2025-03-05T23:30:00.000Z", "claude-opus-4-1", 300, 30, 0),
    ]),
    ("alpha", "a2000000-0000-4000-8000-000000000002", [
        ("2025-03-05T09:00:00.000Z", "claude-sonnet-4.5", 400, 40, 0),
    ]),
    ("beta", "b1000000-0000-4000-8000-000000000003", [
        ("2025-02-20T12:00:00.000Z", "claude-opus-4-1", 50, 5, 0),
    ]),
]


def _write(folder):
    for project, session, responses in PLANTED:
        t = Transcript(session)
        for i, (when, model, tokens_in, tokens_out, read) in enumerate(responses):
            t.user(f"question {i}")["timestamp"] = when
            for line in t.response(f"msg_{session[:2]}_{i}", [{"type": "text", "text": f"answer {i}"}], model=model,
                                   usage={"input_tokens": tokens_in, "output_tokens": tokens_out,
                                          "cache_read_input_tokens": read, "cache_creation_input_tokens": 0}):
                line["timestamp"] = when
        t.write(folder / project / f"{session}.jsonl")


def _tokens(responses) -> int:
    return sum(i + o + r for _, _, i, o, r in responses)


@pytest.fixture
def planted(tmp_path):
    _write(tmp_path)
    return create_app(tmp_path, watch=False).test_client()


def _usage(client, query: str = "") -> dict:
    response = client.get(f"/api/usage{query}")
    assert response.status_code == 200, response.data
    return response.json


def _cost(client, session_id: str) -> float:
    return client.get(f"/api/sessions/{session_id}").json["usage"]["cost_usd"]


def _id(client, session: str) -> str:
    return next(row["id"] for row in client.get("/api/sessions").json["sessions"] if session in row["path"])


def test_each_day_holds_what_was_logged_that_day_and_the_window_follows_the_data(planted):
    data = _usage(planted)
    # The data ends on 2025-03-05: the window is the 30 days up to it, not up to today.
    assert (data["window"]["from"], data["window"]["to"], data["window"]["bucket"]) == ("2025-02-04", "2025-03-05", "day")
    assert (data["window"]["data_from"], data["window"]["data_to"]) == ("2025-02-20", "2025-03-05")
    bars = {bar["from"]: bar for bar in data["bars"]}
    assert len(data["bars"]) == 30 and all(bar["from"] == bar["to"] for bar in data["bars"])
    a1, a2, b1 = (responses for _, _, responses in PLANTED)
    assert bars["2025-03-03"]["total"]["tokens"] == _tokens(a1[:2])
    assert bars["2025-03-05"]["total"]["tokens"] == _tokens(a1[2:]) + _tokens(a2)
    assert bars["2025-02-20"]["total"]["tokens"] == _tokens(b1)
    assert bars["2025-03-04"]["total"]["responses"] == 0
    assert data["total"]["tokens"] == _tokens(a1) + _tokens(a2) + _tokens(b1)
    assert data["total"]["responses"] == 5 and data["total"]["sessions"] == 3
    costs = [_cost(planted, _id(planted, s)) for _, s, _ in PLANTED]
    assert all(c and c > 0 for c in costs)
    assert data["total"]["cost_usd"] == pytest.approx(sum(costs), rel=1e-6)
    assert data["bars"][-1]["value"] == pytest.approx(bars["2025-03-05"]["total"]["cost_usd"])
    days = data["days"]
    assert days["active"] == 3 and days["per_active_day"] == pytest.approx(data["total"]["cost_usd"] / 3)
    busiest = max(("2025-02-20", "2025-03-03", "2025-03-05"), key=lambda d: bars[d]["total"]["cost_usd"])
    assert days["busiest"] == {"day": busiest, "value": pytest.approx(bars[busiest]["total"]["cost_usd"])}
    logged = [response for _, _, responses in PLANTED for response in responses]
    read, fresh = sum(r for *_, r in logged), sum(i for _, _, i, _, _ in logged)
    assert days["cache_read_share"] == pytest.approx(read / (read + fresh))


def test_spellings_of_one_model_are_summed_under_one_name_and_breakdowns_add_up(planted):
    data = _usage(planted)
    models = {row["name"]: row for row in data["breakdowns"]["model"]}
    assert set(models) == {"claude-sonnet-4-5", "claude-opus-4-1"}
    a1, a2, b1 = (responses for _, _, responses in PLANTED)
    assert models["claude-sonnet-4-5"]["tokens"] == _tokens(a1[:2]) + _tokens(a2)
    assert models["claude-sonnet-4-5"]["sessions"] == 2
    projects = {row["name"]: row for row in data["breakdowns"]["project"]}
    assert set(projects) == {"alpha", "beta"} and projects["alpha"]["sessions"] == 2
    assert [row["name"] for row in data["breakdowns"]["cli"]] == ["Claude Code"]
    for name in ("model", "project", "cli"):
        assert sum(row["tokens"] for row in data["breakdowns"][name]) == data["total"]["tokens"]
        assert sum(row["cost_usd"] for row in data["breakdowns"][name]) == pytest.approx(data["total"]["cost_usd"])
    assert data["series"] == [row["name"] for row in data["breakdowns"]["model"]]


def test_the_sessions_behind_a_bar_or_a_row_are_one_click_away(planted):
    page = parse(planted.get("/usage").data)
    [bar] = page.find_all("a", data_from="2025-03-03")
    behind = parse(planted.get(bar.attrs["href"]).data)
    [section] = behind.find_all("section", **{"class": "usage-behind"})
    listed = [a.attrs["href"] for a in section.find_all("a", **{"class": "session-link"})]
    assert listed == [f"/s/{_id(planted, PLANTED[0][1])}"]  # a1 alone answered on 2025-03-03
    assert _usage(planted, bar.attrs["href"][len("/usage"):])["total"]["tokens"] == _tokens(PLANTED[0][2][:2])
    [by_project] = page.find_all("section", aria_labelledby="av-by-project")
    row = next(a for a in by_project.find_all("a") if a.text.strip() == "beta")
    narrowed = _usage(planted, row.attrs["href"][len("/usage"):])
    assert narrowed["filters"]["project"] == "beta" and narrowed["total"]["sessions"] == 1
    assert [s["project"] for s in narrowed["sessions"]] == ["beta"]
    [chip] = parse(planted.get(row.attrs["href"]).data).find_all("span", **{"class": "chip"})
    assert chip.find_all("code")[0].text == "beta"


def test_windows_metrics_and_splits(planted):
    assert _usage(planted, "?from=2025-03-05&to=2025-03-05")["total"]["responses"] == 2
    assert _usage(planted, "?days=7")["window"]["from"] == "2025-02-27"
    everything = _usage(planted, "?days=all")
    assert (everything["window"]["from"], everything["window"]["to"]) == ("2025-02-20", "2025-03-05")
    tokens = _usage(planted, "?metric=tokens&split=project")
    assert tokens["series"] == ["alpha", "beta"]
    day = next(bar for bar in tokens["bars"] if bar["from"] == "2025-03-05")
    assert day["value"] == day["total"]["tokens"] and {s["name"] for s in day["series"]} == {"alpha"}
    year = _usage(planted, "?from=2024-01-01&to=2025-03-05")
    assert year["window"]["bucket"] == "week" and all(bar["from"] <= bar["to"] for bar in year["bars"])
    assert sum(bar["total"]["tokens"] for bar in year["bars"]) == everything["total"]["tokens"]


@pytest.mark.parametrize("query, said", [
    ("?days=12", "days must be one of"), ("?from=yesterday", "from must be a date"), ("?metric=joules", "metric"),
    ("?split=colour", "split"), ("?from=2025-03-05&to=2025-03-01", "from must not be after to"),
])
def test_a_bad_parameter_is_a_clear_400(planted, query, said):
    response = planted.get(f"/api/usage{query}")
    assert response.status_code == 400 and said in response.json["detail"]
    assert planted.get(f"/usage{query}").status_code == 400


def test_sessions_of_every_cli_are_counted_and_those_without_usage_said(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "samples")
    client = create_app(tmp_path / "samples", watch=False).test_client()
    data = _usage(client, "?days=all")
    listed = client.get("/api/sessions").json["sessions"]
    with_usage = {}
    for row in listed:
        tokens = client.get(f"/api/sessions/{row['id']}").json["usage"]
        total = sum(tokens[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                        "cache_creation_input_tokens"))
        if total:
            with_usage.setdefault(row["format_label"], 0)
            with_usage[row["format_label"]] += total
    assert {row["name"]: row["tokens"] for row in data["breakdowns"]["cli"]} == with_usage
    assert {"Claude Code", "Codex CLI", "Gemini CLI", "GitHub Copilot CLI"} <= set(with_usage)
    assert data["counted"]["without_usage"] == len(listed) - data["total"]["sessions"] > 0
    [said] = parse(client.get("/usage?days=all").data).find_all("p", **{"class": "hint usage-counted"})
    assert f"{data['counted']['without_usage']} sessions log no token usage" in said.text


def test_days_are_the_viewers_own_and_the_page_follows_a_growing_session(tmp_path, monkeypatch):
    _write(tmp_path)
    monkeypatch.setenv("TZ", "America/New_York")  # 23:30 UTC on Mar 5 is 18:30 on Mar 5 there; 03:00 UTC is the day before
    with serve(tmp_path) as server:
        def usage(query=""):
            with urllib.request.urlopen(f"{server.url}/api/usage{query}", timeout=10) as response:
                return orjson.loads(response.read())

        def counting(responses):
            data = usage()
            return data if data["total"]["responses"] == responses else None

        before = wait_for(lambda: counting(5), timeout=20)
        assert before["window"]["time_zone"] in ("EST", "EDT")
        poll = f"{server.url}/poll/usage?v={before['version']}"
        with urllib.request.urlopen(poll, timeout=10) as response:
            assert response.status == 204  # nothing new: an empty poll
        t = Transcript("a3000000-0000-4000-8000-000000000004")
        t.user("late question")["timestamp"] = "2025-03-06T03:00:00.000Z"
        for line in t.response("msg_late", [{"type": "text", "text": "late"}], model="claude-opus-4-1",
                               usage={"input_tokens": 7, "output_tokens": 3}):
            line["timestamp"] = "2025-03-06T03:00:00.000Z"
        t.write(tmp_path / "alpha" / "late.jsonl")
        after = wait_for(lambda: counting(6), timeout=20)
        day = next(bar for bar in after["bars"] if bar["from"] == "2025-03-05")
        assert day["total"]["tokens"] == before_day(before, "2025-03-05") + 10
        assert after["window"]["to"] == "2025-03-05"  # still Mar 5 in New York
        with urllib.request.urlopen(poll, timeout=10) as response:
            assert response.status == 200 and b"av-usage-report" in response.read()


def before_day(data: dict, day: str) -> int:
    return next(bar for bar in data["bars"] if bar["from"] == day)["total"]["tokens"]


def test_a_restart_takes_each_sessions_hours_from_the_cache(tmp_path):
    """Sessions kept asleep in the cache answer the usage page without being read again: their hours are kept."""
    from test_claude_settled import age

    folder, cache = tmp_path / "sessions", tmp_path / "cache"
    _write(folder)
    age(folder)

    def usage(server):
        with urllib.request.urlopen(f"{server.url}/api/usage", timeout=10) as response:
            data = orjson.loads(response.read())
        return {k: data[k] for k in ("window", "total", "bars", "breakdowns", "sessions")}

    with serve(folder, "--cache-dir", str(cache)) as server:
        wait_for(lambda: len(kept_entries(cache)) >= 3, timeout=60)
        first = usage(server)
    entries = {path for path, _, _ in kept_entries(cache)}  # files of their own and packs
    assert entries
    for entry in entries:  # dated back: an entry the next start takes is touched
        os.utime(entry, (1, 1))
    with serve(folder, "--cache-dir", str(cache)) as server:
        assert usage(server) == first
    assert first["total"]["responses"] == 5
    assert all(entry.stat().st_mtime > 1 for entry in entries)  # each session was taken from its entry
