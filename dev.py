#!/usr/bin/env python3
"""Quick start for agentview, on any machine with Python 3.11+.

    python3 dev.py serve     serve sample_sessions/ at http://127.0.0.1:8000
    python3 dev.py test      run the whole test suite, browser tests included
    python3 dev.py screenshots   regenerate docs/screenshots/ (every page kind, 390 and 1440 px, light and dark)

Both create (or reuse) a virtualenv in .venv and install what they need; extra
arguments go to `agentview serve` or to pytest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
SYSTEM_CHROMIUM = "/usr/bin/chromium"


def ensure_virtualenv() -> Path:
    python = BIN / ("python.exe" if os.name == "nt" else "python")
    if not python.exists():
        print("dev.py: creating .venv", flush=True)
        venv.create(VENV, with_pip=True)
    stamp = VENV / ".agentview-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != wanted:
        print("dev.py: installing agentview, its test dependencies and the otlp and phoenix extras into .venv", flush=True)
        subprocess.check_call([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        subprocess.check_call([python, "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test,otlp,phoenix]"])
        stamp.write_text(wanted)
    return python


def compile_sources(python: Path) -> None:
    """Write the bytecode of the viewer's modules where it is missing or stale, as installing a package does: where
    PYTHONDONTWRITEBYTECODE is set, every server, read worker and test server would compile them again at its
    start (about 0.3 s of CPU each)."""
    subprocess.check_call([python, "-m", "compileall", "-q", str(ROOT / "viewer")])


def playwright_has_own_chromium() -> bool:
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    return any(cache.glob("chromium*")) if cache.is_dir() else False


def ensure_browser() -> None:
    """The browser tests drive Debian's Chromium (playwright cannot download its own here)."""
    if os.path.exists(os.environ.get("AGENTVIEW_CHROMIUM", SYSTEM_CHROMIUM)) or playwright_has_own_chromium():
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print("dev.py: installing Debian's chromium for the browser tests", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.check_call(["apt-get", "update", "-qq"], env=env)
        subprocess.check_call(["apt-get", "install", "-y", "-qq", "chromium"], env=env)
        return
    sys.exit("dev.py: the browser tests need Chromium: install Debian's `chromium` package, "
             "set AGENTVIEW_CHROMIUM to a Chromium binary, or run `.venv/bin/playwright install chromium`.")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "test", "screenshots"):
        print(__doc__.strip())
        return 2
    command, extra = argv[0], argv[1:]
    python = ensure_virtualenv()
    compile_sources(python)
    os.chdir(ROOT)
    if command == "serve":
        args = [str(python), "-m", "viewer", "serve", "sample_sessions", "--port", "8000", *extra]
    elif command == "screenshots":
        ensure_browser()
        args = [str(python), str(ROOT / "docs" / "screenshots.py"), *extra]
    else:
        ensure_browser()
        args = [str(python), "-m", "pytest", *extra]
    if os.name == "nt":
        return subprocess.call(args)
    os.execv(args[0], args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
