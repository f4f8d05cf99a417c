"""A server lists and searches sessions without importing what only other pages and /mcp need (markdown-it, asyncio
and the MCP SDK, the exports, the shared file, the comparison of runs, the Python API, Pygments), nor compiling the
patterns of secrets no text it showed holds: each is made when first needed. Run in a fresh interpreter: the test
process has them all."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import REPO

LAZY = ("markdown_it", "asyncio", "mcp.server", "viewer.export.text", "viewer.share.page", "viewer.reads.compare",
        "viewer.reads.session_viewer", "pygments")

SERVED = r"""
import json, sys
from viewer.core import redact
from viewer.web.app import close_app, create_app
app = create_app(sys.argv[1], watch=False)
client = app.test_client()
seen = {}
listed = client.get("/api/sessions").get_json()["sessions"]
searched = client.get("/api/search?q=jack").status_code
seen["listing and searching"] = [name for name in %(lazy)r if name in sys.modules]
patterns = redact._pattern.cache_info().currsize
page = client.get(listed[0]["url"]).status_code
from viewer.web import text
drawn = text.markdown_html("# Plan\n\n**first** the `tests`")
seen["Markdown drawn"] = [name for name in %(lazy)r if name in sys.modules]
close_app(app)
exported = client.get(listed[0]["url"] + "/export/markdown").status_code
seen["exported"] = [name for name in %(lazy)r if name in sys.modules]
masked = redact.mask("the key: sk-proj-0123456789abcdefghij")
code = text.highlighted_code("x = 1", "python")
seen["code highlighted"] = [name for name in %(lazy)r if name in sys.modules]
print(json.dumps({"listed": len(listed), "searched": searched, "page": page, "drawn": drawn, "seen": seen,
                  "patterns": patterns, "exported": exported, "masked": masked,
                  "compiled": redact._pattern.cache_info().currsize, "code": code}))
"""


def test_listing_and_searching_import_neither_markdown_nor_the_mcp_sdk(tmp_path):
    shutil.copy(REPO / "sample_sessions" / "example1_jack_and_jill.jsonl", tmp_path)
    run = subprocess.run([sys.executable, "-c", SERVED % {"lazy": LAZY}, str(tmp_path)], capture_output=True,
                         text=True, timeout=120, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert (answer["listed"], answer["searched"], answer["page"]) == (1, 200, 200)
    assert answer["seen"]["listing and searching"] == [] and answer["patterns"] == 0
    assert answer["seen"]["Markdown drawn"] == ["markdown_it"]  # imported once a page draws Markdown
    assert answer["exported"] == 200 and answer["seen"]["exported"] == ["markdown_it", "viewer.export.text"]
    assert (answer["masked"], answer["compiled"]) == ("the key: sk-p…[masked]", 1)  # once a text holds a secret
    assert answer["drawn"] == "<h4>Plan</h4>\n<p><strong>first</strong> the <code>tests</code></p>\n"
    assert answer["seen"]["code highlighted"] == ["markdown_it", "viewer.export.text", "pygments"]  # its first block
    assert answer["code"].startswith('<pre class="highlight" data-language="python"><code><span class="n">x</span>')
