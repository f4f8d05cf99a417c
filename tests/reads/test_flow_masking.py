"""Every piece of log text the flow features print is masked while masking is on (redact.shown,
through exports.log_text): no output of exports, provenance, the chart, the spawn graph or a trace
still holds the secret from research_team, and the masked form is there instead."""

from conftest import sample
from viewer.export import text as exports
from viewer.reads import provenance
from viewer.core import redact
from viewer.reads.session_viewer import load_index

SECRET = "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"


def test_the_sample_really_holds_the_secret():
    s = load_index(sample("research_team"))
    assert SECRET in exports.trace_text(s) and SECRET in provenance.hook_audit(s)["groups"][0]["deliveries"][0]["original"]


def test_exports_print_log_text_only_through_log_text():
    s = load_index(sample("research_team"))
    with redact.masking():
        outputs = [exports.export(s, f) for f in ("trace", "dot", "json")]
        outputs += [exports.export(s, "markdown", agent=a) for a in s.agent_order]
        outputs.append(exports.export(s, "markdown", agents=list(s.agent_order)))
        audit = provenance.hook_audit(s)
    for text in outputs + [repr(audit)]:
        assert SECRET not in text
    assert redact.MASK in outputs[0] and redact.MASK in outputs[2]  # trace and json print it masked (dot: short labels)
    assert redact.MASK in audit["groups"][0]["deliveries"][0]["original"]


def test_flow_pages_print_log_text_only_through_their_helpers(client):
    urls = ["/s/research_team/chart?size=1000", "/api/sessions/research_team/chart?size=1000",
            "/s/research_team/hooks", "/api/sessions/research_team/hooks", "/s/research_team/spawn",
            "/s/research_team/trace/msg_109", "/api/sessions/research_team/trace/msg_109",
            "/s/research_team/export/trace", "/s/research_team/export/json"]
    for url in urls:
        body = client.get(url).get_data(as_text=True)
        assert SECRET not in body, url
    hooks = client.get("/s/research_team/hooks").get_data(as_text=True)
    assert "<del>masked</del>" in hooks  # the diff is of the masked texts: [masked] -> [REDACTED]


def test_chart_spawn_graph_and_trace_mask_a_secret_at_the_start_of_a_text(tmp_path):
    """Labels are short: a secret where they cut is masked whole first, never shown in part."""
    from conftest import write_events
    from events import calls, created, say, tool_call
    from viewer.web.app import create_app

    secret = SECRET  # bare, so only a whole-text mask before the cut recognises it
    write_events(tmp_path / "s.jsonl", [
        created("m1", "root"), calls("m2", "root", tool_call("c1", name="helper", system_prompt=secret)),
        created("m3", "helper", cause="m2", name="helper"), say("m4", "helper", secret + " is the key"),
    ])
    client = create_app(tmp_path, watch=False).test_client()
    for url in ["/s/s/chart", "/api/sessions/s/chart", "/s/s/spawn", "/api/sessions/s/spawn",
                "/s/s/trace/m4", "/api/sessions/s/trace/m4", "/api/sessions/s/lineage/helper"]:
        body = client.get(url).get_data(as_text=True)
        assert SECRET[:12] not in body and redact.MASK in body, url
