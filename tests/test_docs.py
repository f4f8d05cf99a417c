"""The documentation a newcomer reads: a short README for users, docs/ for the rest, and nothing in the project
that speaks of how it was made (that is what commit messages are for)."""

from __future__ import annotations

import ast
import re

from conftest import REPO

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))

# How a project's history shows up in prose: numbered stops and issues, targets by number, commit hashes.
HISTORY = re.compile(r"\b[Ss]tops? \d+|\b[Ii]ssues? #?\d+|\b[Tt]argets? \d+\b|`[0-9a-f]{7,40}`|\"commit\":")
TIMING = re.compile(r"\d(?:[\d,.]*\d)? ?(?:ms|µs|us)\b")
MAX_DOCSTRING_LINES = 7


def history_in(path) -> list[str]:
    return [f"{path.relative_to(REPO)}:{n}: {line.strip()}"
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if HISTORY.search(line)]


def module_docstrings():
    for path in sorted((REPO / "viewer").rglob("*.py")):
        yield path, ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def test_the_readme_is_short_and_starts_with_what_a_user_needs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 400
    first_screen = text[:text.index("### Gallery")]
    assert "agentview serve ~/.claude/projects" in first_screen
    for word in ("heard", "did", "said", "substance", "delivery", "perspective", "dialog"):
        assert f"**{word}**" in first_screen, word
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "python3 dev.py serve " in quick_start and "python3 dev.py test " in quick_start


def test_the_readme_leads_to_every_document_and_every_link_to_a_file():
    links = {path: re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")) for path in [README, *DOCS]}
    assert {f"docs/{name}.md" for name in ("format", "api", "design", "performance")} <= set(links[README])
    broken = [f"{path.relative_to(REPO)} -> {target}" for path, targets in links.items() for target in targets
              if not re.match(r"[a-z]+:|#", target) and not (path.parent / target.split("#", 1)[0]).exists()]
    assert broken == []


def test_nothing_speaks_of_how_the_project_was_made():
    found = [hit for path in [README, *DOCS] for hit in history_in(path)]
    found += [hit for path in sorted((REPO / "benchmarks").rglob("*"))
              if path.suffix in (".py", ".md", ".json") for hit in history_in(path)]
    found += [f"{path.relative_to(REPO)} (docstring)" for path, doc in module_docstrings() if HISTORY.search(doc)]
    assert found == []


def test_module_docstrings_say_what_and_why_in_a_few_lines():
    long = [f"{path.relative_to(REPO)}: {len(doc.splitlines())} lines" for path, doc in module_docstrings()
            if len(doc.splitlines()) > MAX_DOCSTRING_LINES]
    timed = [f"{path.relative_to(REPO)}: {TIMING.search(doc)[0]}" for path, doc in module_docstrings()
             if TIMING.search(doc)]
    assert long == [] and timed == []  # figures live in docs/performance.md, design in docs/design.md
