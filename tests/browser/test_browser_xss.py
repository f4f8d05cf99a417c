"""A session full of XSS payloads, in every field any page shows: no script runs, the text is shown as text.

The browser ignores our Content-Security-Policy here (bypass_csp), so these tests fail as soon as
escaping fails anywhere, not only when the CSP fails too.
"""

import json
import urllib.parse

import pytest

from conftest import serve, wait_for, write_events

pytestmark = pytest.mark.browser

PAYLOADS = [
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=\"window.__pwned=1\">",
    "<svg onload=\"window.__pwned=1\">",
    "<svg><script>window.__pwned=1</script></svg>",
    "<iframe src=\"javascript:parent.__pwned=1\"></iframe>",
    "<iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
    "<a href=\"javascript:window.__pwned=1\" id=\"pwn-link\">click</a>",
    "javascript:window.__pwned=1",
    "\"><script>window.__pwned=1</script>",
    "'><img src=x onerror=window.__pwned=1>",
    "<style>body{background:url(\"javascript:window.__pwned=1\")} #av-tree{display:none}</style>",
    "<div style=\"position:fixed;inset:0;background:red\" onmouseover=\"window.__pwned=1\">",
    "<body onload=window.__pwned=1>",
    "<details open ontoggle=window.__pwned=1>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=1>",
    "<input autofocus onfocus=window.__pwned=1>",
    "\u202egnp.exe <script>window.__pwned=1</script>",
    "\u2066\u202eevil\u202c\u2069 <b onclick=window.__pwned=1>",
    "<object data=\"javascript:window.__pwned=1\"></object>",
    "<embed src=\"javascript:window.__pwned=1\">",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:window.__pwned=1\">",
    "<div hx-get=\"/\" hx-trigger=\"load\" hx-on::after-request=\"window.__pwned=1\">htmx</div>",
    "<base href=\"javascript:window.__pwned=1//\">",
    "</pre></code></details></summary><script>window.__pwned=1</script>",
    "{{ 7*7 }} {% raw %}${window.__pwned=1}",
    "<template><script>window.__pwned=1</script></template><noscript><p title=\"</noscript><img src=x onerror=window.__pwned=1>\">",
]
FILE_NAME = "\"><img src=x onerror=window.__pwned=1>"  # no '/' in a file name


def hostile_events(part: int) -> list[dict]:
    """Every field a page shows carries payloads: ids, names, models, content, tools, arguments."""
    root = "root<script>window.__pwned=1</script>"
    events = [{"message_id": "m0<img src=x onerror=window.__pwned=1>", "event_type": "agent_created",
               "agent_id": root, "name": PAYLOADS[1], "language_model": PAYLOADS[2]}]
    for i, payload in enumerate(PAYLOADS):
        mid = f"m{part}-{i}{payload}"
        agent = f"agent{i % 3}{payload}" if i % 3 else root
        call = {"id": f"call{part}-{i}{payload}", "type": "function",
                "function": {"name": f"tool{payload}", "arguments": json.dumps({payload: payload, "nested": [payload]})}}
        events += [
            {"message_id": f"{mid}-created", "event_type": "agent_created", "agent_id": agent,
             "name": payload, "language_model": payload, "cause": f"{mid}-call"} if part == 1 and i % 3 else None,
            {"message_id": f"{mid}-call", "event_type": "transcript_entry", "agent_id": root, "role": "assistant",
             "content": payload, "tool_calls": [call]},
            {"message_id": f"{mid}-result", "event_type": "transcript_entry", "agent_id": root, "role": "tool",
             "tool_call_id": call["id"], "name": call["function"]["name"], "content": payload},
            {"message_id": f"{mid}-said", "event_type": "transcript_entry", "agent_id": agent, "role": "assistant",
             "content": f"{payload} said {payload}"},
            {"message_id": f"{mid}-heard", "event_type": "transcript_entry", "agent_id": root, "role": "user",
             "content": f"[{payload}]: changed {payload}", "substance": f"{mid}-said"},
            {"message_id": f"{mid}-piece", "event_type": "piece_of_text", "agent_id": agent, "content": payload,
             "cause": [f"{mid}-said", payload]},
            {"message_id": f"{mid}-odd", "event_type": payload, "agent_id": agent, "content": payload},
        ]
    return [e for e in events if e is not None]


def assert_harmless(page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    page.wait_for_timeout(50)  # let onload/onerror/autofocus handlers fire, if any got through
    report = page.evaluate("""() => {
        const ours = new Set(["htmx", "agentview"]);
        return {
            pwned: window.__pwned === 1,
            handlers: [...document.querySelectorAll("*")].flatMap(el => [...el.attributes]
                .filter(a => a.name.startsWith("on") || a.name.startsWith("hx-on") || a.name === "srcdoc")
                .map(a => el.tagName + " " + a.name)),
            foreign: [...document.querySelectorAll("iframe, object, embed, img[src='x'], math, base, meta[http-equiv], body style, "
                + "input[autofocus], template, noscript, #pwn-link, [hx-trigger='load'], [style]")]
                .map(el => el.outerHTML.slice(0, 80)),
            scripts: [...document.scripts].filter(s => ![...ours].some(n => (s.getAttribute("src") || "").includes(n)))
                .map(s => s.outerHTML.slice(0, 80)),
            links: [...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href"))
                .filter(h => /^\\s*(javascript|data|vbscript):/i.test(h)),
        };
    }""")
    assert report == {"pwned": False, "handlers": [], "foreign": [], "scripts": [], "links": []}, url


def urls_of(base: str, session_id: str, agents: list[str], messages: list[str]) -> list[str]:
    def q(value):
        return urllib.parse.quote(value, safe="")

    s = f"{base}/s/{q(session_id)}"
    pages = [f"{base}/", s, f"{s}/problems", f"{s}/dialog?agents={q(','.join(agents))}",
             f"{base}/s/{q(PAYLOADS[0])}", f"{s}/agents/{q(PAYLOADS[3])}", f"{s}/messages/{q(PAYLOADS[9])}"]
    pages += [f"{s}/agents/{q(a)}" for a in agents] + [f"{s}/agents/{q(agents[0])}?sub=1"]
    pages += [f"{s}/messages/{q(m)}" for m in messages]
    # search, the pictures, provenance, tracing and "as of": every page that shows log text
    pages += [f"{base}/search?q=pwned", f"{base}/search?q={q(PAYLOADS[0])}", f"{s}/chart?size=1000",
              f"{s}/chart?agents={q(','.join(agents[:3]))}", f"{s}/hooks", f"{s}/spawn",
              f"{s}/agents/{q(agents[0])}?at=60", f"{s}?at=30", f"{s}/agents/{q(agents[0])}?kind=heard,said"]
    pages += [f"{s}/trace/{q(m)}" for m in messages[:5]] + [f"{s}/chart?trace={q(messages[3])}"]
    return pages


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "bypass_csp": True}


def test_no_payload_runs_on_any_page_and_each_is_shown_literally(tmp_path, page):
    folder = tmp_path / "sessions"
    path = folder / f"{FILE_NAME}.jsonl"
    write_events(path, hostile_events(1))
    with open(path, "a", encoding="utf-8") as f:  # a problem excerpt and a missing field, shown on /problems
        f.write(f"{PAYLOADS[0]} not json\n")
        f.write(json.dumps({"message_id": PAYLOADS[5], "event_type": "transcript_entry"}) + "\n")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with serve(folder, "--no-redact") as server:
        sessions = wait_for(lambda: page.request.get(f"{server.url}/api/sessions").json()["sessions"])
        session_id = sessions[0]["id"]
        api = page.request.get(f"{server.url}/api/sessions/{urllib.parse.quote(session_id, safe='')}").json()
        agents = [a["agent_id"] for a in api["agents"]]
        events = page.request.get(f"{server.url}/api/sessions/{urllib.parse.quote(session_id, safe='')}/events").json()
        messages = [e["message_id"] for e in events["events"]]
        assert len(agents) == 18 and len(messages) > 150
        sample_of_messages = messages[:: max(1, len(messages) // 40)]
        for url in urls_of(server.url, session_id, agents, sample_of_messages):
            assert_harmless(page, url)

        # Exports are text, never a page a browser would render or sniff.
        for fmt in ("markdown", "trace", "dot", "json"):
            query = f"?agent={urllib.parse.quote(agents[0], safe='')}" if fmt == "markdown" else ""
            response = page.request.get(f"{server.url}/s/{urllib.parse.quote(session_id, safe='')}/export/{fmt}{query}")
            assert response.ok and "html" not in response.headers["content-type"], fmt
            assert response.headers["x-content-type-options"] == "nosniff"

        # Shown literally, as text: in the tree, the transcript, tool calls and the problems list.
        page.goto(f"{server.url}/s/{urllib.parse.quote(session_id, safe='')}/agents/{urllib.parse.quote(agents[0], safe='')}")
        text = page.locator("main").inner_text()
        for payload in PAYLOADS[:12]:
            assert payload in text, payload
        page.goto(f"{server.url}/s/{urllib.parse.quote(session_id, safe='')}/problems")
        assert PAYLOADS[0] in page.locator("main").inner_text()
        page.goto(f"{server.url}/")
        assert FILE_NAME in page.locator("main").inner_text()

        # Live: payloads arriving while pages are open go through the poll fragments, escaped too.
        agent_url = f"{server.url}/s/{urllib.parse.quote(session_id, safe='')}/agents/{urllib.parse.quote(agents[0], safe='')}"
        page.goto(agent_url)
        tree_page = page.context.new_page()
        tree_page.goto(f"{server.url}/s/{urllib.parse.quote(session_id, safe='')}")
        write_events(path, hostile_events(2), mode="a")
        expect_text = "m2-5"  # a message id of the second batch
        wait_for(lambda: expect_text in page.locator("main").inner_text(), timeout=10)
        wait_for(lambda: tree_page.locator("#av-tree li.node").count() >= 3, timeout=10)
        for p in (page, tree_page):
            assert p.evaluate("() => window.__pwned") is None
            assert p.evaluate("""() => [...document.querySelectorAll('*')].some(el =>
                [...el.attributes].some(a => a.name.startsWith('on') || a.name.startsWith('hx-on')))""") is False
        tree_page.close()
    assert dialogs == []
