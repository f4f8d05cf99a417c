"""How many transcript entries one core renders a second: agent pages of 200 entries, masking on.

    .venv/bin/python benchmarks/render_rate.py [--events 20000] [--pages 20] [--reps 3] [--before CHECKOUT]
                                               [--workdir DIR] [--json OUT]

Generates a native session (generate.py --shape long: content of 8-300 words) and serves it with the Flask test
client (no network), then renders the busiest agent's first `pages` pages (entries = the page's entries and the
tool results shown under their calls) and divides by the CPU seconds they took:
- cold: the rendered-entry cache off and the text caches emptied (text.py's Markdown, ANSI and arguments
  renderings), so every entry is rendered from its event, as on a first visit;
- warm: the cache on, filled by one pass over the same pages, then timed: what the 2nd to 25th pollers of a
  live page, or a page read again, cost;
- reference, measured in the same run: plain Jinja2 printing each entry's kind, ids and content (escaped) with
  one macro call an entry and no masking: how fast this machine runs Jinja at all; and with `--before`, the
  cold rate of another checkout (say a worktree of the previous commit), measured in the same run.
Each figure is the best of `reps` runs (the machine may be shared: the best run is the least disturbed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import generate  # noqa: E402

PAGE = 200
SESSION = "bench"


def entries_in(html: bytes) -> int:
    """The entries a page shows: its articles and the results under their calls."""
    return html.count(b'<article class="entry') + html.count(b'<div class="result"')


def pages_of(folder: str, agent: str, pages: int, *, cache: bool, reps: int) -> dict:
    """Entries per CPU second rendering the agent's first `pages` pages; the best of `reps` runs."""
    from viewer.web import text
    from viewer.web.app import create_app

    app = create_app(folder, watch=False)
    if not cache:
        app.config["ENTRY_CACHE_BYTES"] = 0  # an older checkout has no cache: the setting is ignored there
    client = client_of(app)
    urls = [f"/s/{SESSION}/agents/{agent}?start={start}" for start in range(0, pages * PAGE, PAGE)]
    if cache:
        for url in urls:  # the pass that fills the cache: not timed
            client.get(url)
    best, entries = 0.0, 0
    for _ in range(reps):
        if not cache:
            for cached in (text.markdown_html, text.ansi_html, text.arguments_html):
                cached.cache_clear()
        began, entries = time.process_time(), 0
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            entries += entries_in(response.get_data())
        best = max(best, entries / max(time.process_time() - began, 1e-9))
    return {"entries": entries, "pages": len(urls), "entries_per_cpu_s": round(best)}


def client_of(app):
    client = app.test_client()
    client.get(f"/s/{SESSION}")  # templates compiled, session looked at: not part of any figure
    return client


REFERENCE = """{% macro entry(item) -%}
<article class="entry kind-{{ item.kind }}" id="{{ item.message_id }}" data-position="{{ item.position }}">
  <h3><span class="kind">{{ item.kind }}</span> <a href="/m/{{ item.message_id }}">{{ item.message_id }}</a></h3>
  <pre class="content">{{ item.content }}</pre>
</article>
{%- endmacro %}{% for item in items %}{{ entry(item) }}{% endfor %}"""


def plain_jinja(folder: str, agent: str, pages: int, reps: int) -> dict:
    """The reference: plain Jinja2 (autoescape, one macro an entry, nothing masked) over the same entries."""
    import jinja2

    from viewer.reads import queries
    from viewer.web.app import create_app

    app = create_app(folder, watch=False)
    s = app.extensions["agentview"].library.get(SESSION)
    views = [queries.perspective(s, agent, False, start, PAGE)["items"] for start in range(0, pages * PAGE, PAGE)]
    items = [[{k: item[k] for k in ("kind", "message_id", "position", "content")} for item in view] for view in views]
    template = jinja2.Environment(autoescape=True).from_string(REFERENCE)
    best = 0.0
    for _ in range(reps):
        began = time.process_time()
        for page in items:
            template.render(items=page)
        best = max(best, sum(map(len, items)) / max(time.process_time() - began, 1e-9))
    return {"entries": sum(map(len, items)), "entries_per_cpu_s": round(best)}


def measure(folder: str, agent: str, pages: int, reps: int) -> dict:
    return {"cold": pages_of(folder, agent, pages, cache=False, reps=reps),
            "warm": pages_of(folder, agent, pages, cache=True, reps=reps),
            "plain_jinja": plain_jinja(folder, agent, pages, reps)}


def before(checkout: str, folder: str, agent: str, pages: int, reps: int) -> dict:
    """The cold rate of another checkout's code, in a process of its own (its `viewer` imported, not ours)."""
    result = subprocess.run([sys.executable, __file__, "--cold-only", folder, agent, str(pages), str(reps)],
                            capture_output=True, text=True, cwd=checkout, env={**os.environ, "PYTHONPATH": checkout})
    if result.returncode:
        raise RuntimeError(f"the checkout at {checkout} failed:\n{result.stderr}")
    return json.loads(result.stdout)


def main(argv: list[str] | None = None) -> dict:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--cold-only"]:  # the child of `before`: the cold rate of the code on PYTHONPATH
        folder, agent, pages, reps = args[1], args[2], int(args[3]), int(args[4])
        print(json.dumps(pages_of(folder, agent, pages, cache=False, reps=reps)))
        return {}
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events in the generated session")
    parser.add_argument("--pages", type=int, default=20, help="pages of 200 entries rendered (fewer if it has fewer)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--before", metavar="CHECKOUT", help="also the cold rate of the code in that checkout")
    parser.add_argument("--workdir", help="where the session is generated (default: a temporary folder)")
    parser.add_argument("--json", metavar="PATH", help="also write the results there")
    parser.add_argument("--quiet", action="store_true", help="print the JSON only")
    options = parser.parse_args(args)
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(dir=options.workdir, prefix="agentview-render-") as folder:
        facts = generate(Path(folder) / f"{SESSION}.jsonl", options.events, shape="long")
        agent = facts["busiest"]
        pages = max(1, min(options.pages, facts["busiest_entries"] // PAGE))
        result = {"events": facts["events"], "agent": agent, **measure(folder, agent, pages, options.reps)}
        if options.before:
            result["before"] = before(options.before, folder, agent, pages, options.reps)
    text = json.dumps(result, indent=2)
    if not options.quiet:
        print(table(result))
    else:
        print(text)
    if options.json:
        Path(options.json).write_text(text + "\n")
    return result


def table(result: dict) -> str:
    cold, warm, plain = result["cold"], result["warm"], result["plain_jinja"]
    lines = [f"{cold['pages']} agent pages of {PAGE} entries ({cold['entries']:,} entries, "
             f"session of {result['events']:,} events), masking on, best of the runs:",
             f"  cold (no cache, text caches emptied)   {cold['entries_per_cpu_s']:>9,} entries per CPU s",
             f"  warm (rendered entries shared)          {warm['entries_per_cpu_s']:>9,} entries per CPU s"]
    if "before" in result:
        lines.append(f"  before (--before checkout, cold)        {result['before']['entries_per_cpu_s']:>9,} "
                     "entries per CPU s")
    lines.append(f"  reference: plain Jinja2, one macro an entry, no masking {plain['entries_per_cpu_s']:>9,} "
                 "entries per CPU s")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
