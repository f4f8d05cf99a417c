"""The wheel holds everything the viewer needs: every module, template and static file."""

import shutil
import subprocess
import sys
import zipfile

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
