"""A guard on what a page costs to load: its stylesheets and scripts, compressed as a server would send them.

Only a guard: it fails when some page's CSS and JS together cross the budget, and says nothing of how fast a
page loads or draws (benchmarks/ and docs/performance.md measure that)."""

import gzip

from dom import parse
from page_kinds import PAGE_KINDS

BUDGET = 60 * 1024  # CSS + JS of one page, gzipped


def test_no_page_loads_more_than_60_kb_of_compressed_css_and_js(client):
    heavy = {}
    for kind, path in PAGE_KINDS.items():
        doc = parse(client.get(path).data)
        assets = [link.attrs["href"] for link in doc.find_all("link", rel="stylesheet")]
        assets += [script.attrs["src"] for script in doc.find_all("script") if script.attrs.get("src")]
        assert any(a.endswith(".css") for a in assets) and any(a.endswith(".js") for a in assets), kind
        weight = 0
        for url in assets:
            answer = client.get(url)
            assert answer.status_code == 200, url
            weight += len(gzip.compress(answer.data, 9))
            answer.close()
        if weight > BUDGET:
            heavy[kind] = weight
    assert heavy == {}
