#!/usr/bin/env python3
"""Screenshots of every page kind, and of a shared file, at 390 px and 1440 px wide, light and dark, into docs/screenshots/.

    python3 dev.py screenshots

Serves a copy of sample_sessions/ on a free port and drives the system Chromium (as the browser tests do).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from conftest import SAMPLES, SYSTEM_CHROMIUM, serve  # noqa: E402
from page_kinds import PAGE_KINDS  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
WIDTHS = {"phone": (390, 844), "desktop": (1440, 900)}
THEMES = ("light", "dark")
SHARED = ("research_team.jsonl", "#agent=agent_researcher")  # a shared file, opened on a perspective
CLAUDE = "/s/claude_code:-home-dev-src-parser:5b1e8c2a-audit"  # a Claude Code session of the samples, by its title
EXTRA = {"claude-code-session": CLAUDE, "claude-code-agent": CLAUDE + "/agents/main"}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "sessions"
        shutil.copytree(SAMPLES, folder)
        shared = Path(scratch) / "shared.html"
        from viewer import cli

        cli.main(["share", "-o", str(shared), str(folder / SHARED[0])])
        with serve(folder) as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=SYSTEM_CHROMIUM if Path(SYSTEM_CHROMIUM).exists() else None,
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            for theme in THEMES:
                for device, (width, height) in WIDTHS.items():
                    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=theme)
                    for kind, path in {**PAGE_KINDS, **EXTRA}.items():
                        page.goto(server.url + path, wait_until="networkidle")
                        page.screenshot(path=str(OUT / f"{kind}-{device}-{theme}.png"))
                    page.goto(shared.as_uri() + SHARED[1])
                    page.wait_for_selector("body[data-ready]")
                    page.screenshot(path=str(OUT / f"shared-file-{device}-{theme}.png"))
                    page.close()
            browser.close()
    print(f"wrote {(len(PAGE_KINDS) + len(EXTRA) + 1) * len(WIDTHS) * len(THEMES)} screenshots to {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
