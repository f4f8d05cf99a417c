"""Every piece of log text the flow features print passes one helper per feature, where masking plugs in.

The helpers are identities on this branch; these tests install a real replacement and check that
no output of the feature still holds the secret from research_team.
"""

import pytest

from conftest import sample
from viewer import exports, flow, provenance
from viewer.session_viewer import load_index

SECRET = "sk-live-51Hx9fQ2aZ7rL0mN3vB8cT4yW6"


def mask(text):
    return text.replace(SECRET, "[MASKED]")


@pytest.fixture
def masking(monkeypatch):
    monkeypatch.setattr(exports, "log_text", mask)
    monkeypatch.setattr(exports, "log_json", lambda data: data.replace(SECRET.encode(), b"[MASKED]"))
    monkeypatch.setattr(flow, "log_text", mask)
    monkeypatch.setattr(provenance, "log_text", mask)


def test_the_sample_really_holds_the_secret():
    s = load_index(sample("research_team"))
    assert SECRET in exports.trace_text(s) and SECRET in provenance.hook_audit(s)["groups"][0]["deliveries"][0]["original"]


def test_exports_print_log_text_only_through_log_text(masking):
    s = load_index(sample("research_team"))
    outputs = [exports.export(s, f) for f in ("trace", "dot", "json")]
    outputs += [exports.export(s, "markdown", agent=a) for a in s.agent_order]
    outputs.append(exports.export(s, "markdown", agents=list(s.agent_order)))
    for text in outputs:
        assert SECRET not in text
    assert any("[MASKED]" in text for text in outputs)


def test_flow_pages_print_log_text_only_through_their_helpers(masking, client):
    urls = ["/s/research_team/chart?size=1000", "/api/sessions/research_team/chart?size=1000",
            "/s/research_team/hooks", "/api/sessions/research_team/hooks", "/s/research_team/spawn",
            "/s/research_team/trace/msg_109", "/api/sessions/research_team/trace/msg_109",
            "/s/research_team/export/trace", "/s/research_team/export/json"]
    for url in urls:
        body = client.get(url).get_data(as_text=True)
        assert SECRET not in body, url
    assert "<del>MASKED</del>" in client.get("/s/research_team/hooks").get_data(as_text=True)  # the diff of masked texts
