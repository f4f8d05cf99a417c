"""docs/format.md describes the native format: its example is a valid session that reads as it says."""

from __future__ import annotations

import re

from conftest import REPO
from viewer.web.app import create_app

DOC = REPO / "docs" / "format.md"


def test_the_readme_links_the_format_doc_first():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_link = re.search(r"\]\(([^)]+)\)", readme).group(1)
    assert first_link == "docs/format.md"
    assert "../shared" not in readme


def test_the_example_reads_as_the_doc_says(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    example = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    (tmp_path / "example.jsonl").write_text(example, encoding="utf-8")
    client = create_app(tmp_path, watch=False).test_client()
    session = client.get("/api/sessions/example").get_json()
    assert session["problems"] == [] and session["events"] == 8
    agents = {a["agent_id"]: a for a in session["agents"]}
    assert agents["greeter"]["parent_id"] == "root" and agents["root"]["name"] == "Planner"
    greeter = client.get("/s/example/agents/greeter").data.decode()
    assert "modified on its way" in greeter.split('id="m7"')[1].split("</article>")[0]
    root = client.get("/s/example/agents/root").data.decode()
    assert 'id="m5"' in root.split('id="m2"')[1].split("</article>")[0]  # the result shows under its call
    assert "unpaired result" not in root
    for kind in ("agent_created", "transcript_entry", "piece_of_text", "cause", "substance"):
        assert f"`{kind}`" in text

