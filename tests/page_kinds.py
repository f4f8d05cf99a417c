"""One URL of every page kind, on the sample sessions: the browser tests and docs/screenshots.py walk this list."""

PAGE_KINDS = {
    "sessions": "/",
    "session": "/s/research_team",
    "agent": "/s/research_team/agents/agent_writer",
    "agent-with-sub-agents": "/s/research_team/agents/agent_researcher?sub=1",
    "message": "/s/research_team/messages/msg_113",
    "dialog": "/s/example1_jack_and_jill/dialog?agents=agent_jack&agents=agent_jill",
    "search": "/search?q=coffee",
    "chart": "/s/research_team/chart",
    "spawn-graph": "/s/research_team/spawn",
    "trace": "/s/research_team/trace/msg_113",
    "hooks": "/s/research_team/hooks",
    "problems": "/s/research_team/problems",
    "timeline": "/s/claude_code:-home-dev-src-parser:5b1e8c2a-audit/timeline",
    "failures": "/s/claude_code:-home-dev-src-parser:5b1e8c2a-audit/failures",
    "compare": "/compare?a=example1_jack_and_jill&b=example2_inner_monologue",
    "usage": "/usage?days=all",
    "error": "/s/no_such_session",
}


def wider_than_the_screen(page, base_url: str, paths, width: int = 360, answering: bool = False) -> dict[str, int]:
    """The pages of `paths` that scroll sideways in a `width` px wide window (path -> the width they take);
    `answering`: each must answer 200 (the list of page kinds has a page that is not found)."""
    page.set_viewport_size({"width": width, "height": 740})
    wide = {}
    for path in paths:
        response = page.goto(base_url + path)
        assert not answering or (response is not None and response.ok), (path, response and response.status)
        page.wait_for_load_state("networkidle")
        taken = page.evaluate("document.documentElement.scrollWidth")
        if taken > width:
            wide[path] = taken
    return wide
