"""The wheel holds everything the viewer needs: every module, template and static file; the Quick start compiles
the modules as an install does."""

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO


def test_the_wheel_carries_every_module_template_and_static_file(tmp_path):
    # From a clean copy: a build/ folder left in the checkout would hide a package missing from pyproject.
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "test-results"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("agentview-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {p.relative_to(REPO).as_posix() for p in (REPO / "viewer").rglob("*.py")}
    wanted |= {f"viewer/_templates/{p.name}" for p in (REPO / "templates").glob("*.html")}
    wanted |= {p.relative_to(REPO).as_posix() for p in (REPO / "viewer" / "data").glob("*.json")}  # the price table
    wanted |= {f"viewer/_static/{p.name}" for p in (REPO / "static").iterdir() if p.suffix in (".js", ".css")}
    assert wanted - names == set()


def test_the_quick_start_writes_every_module_s_bytecode_even_where_python_would_not(tmp_path):
    """`dev.py` compiles the viewer's modules as installing a wheel does: where PYTHONDONTWRITEBYTECODE is set,
    every server and worker would otherwise compile them again at its start. A copy of the package, so that
    the checkout's own bytecode is not what is looked at."""
    copy = tmp_path / "checkout"
    shutil.copytree(REPO / "viewer", copy / "viewer", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "dev.py", copy / "dev.py")
    program = "import sys, dev; dev.compile_sources(sys.executable)"
    subprocess.run([sys.executable, "-c", program], cwd=copy, check=True, env={"PYTHONDONTWRITEBYTECODE": "1",
                                                                                "PATH": "/usr/bin:/bin"})
    sources = sorted((copy / "viewer").rglob("*.py"))
    missing = [s for s in sources if not Path(importlib.util.cache_from_source(str(s))).exists()]
    assert len(sources) > 100 and missing == []
