"""Run the server as another user (nobody, when the tests run as root, since root reads any file).

The checkout, its .venv and the interpreter may sit in a folder only their owner may enter (a 0700 home,
/root, a `mktemp -d`), so the server cannot be run from there as that user: it is run from a copy of what it
needs (the viewer package, templates, static, and the installed packages it depends on) in a temp folder
anyone may enter, by the first interpreter that user can start."""

from __future__ import annotations

import atexit
import functools
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent

NOBODY = 65534


def as_other_user() -> int | None:
    """The user to run a server as so that permissions apply to it: nobody when we are root, else ourselves."""
    return NOBODY if os.geteuid() == 0 else None


@dataclass(frozen=True)
class Runtime:
    python: str  # an interpreter the user may start
    code: Path  # holds viewer/, templates/, static/: the server's working folder
    site: Path  # the installed packages the server imports

    def env(self) -> dict[str, str]:
        return dict(os.environ, PYTHONPATH=f"{self.code}{os.pathsep}{self.site}")


def _readable_by_all(root: Path) -> None:
    for path, dirs, files in os.walk(root):
        os.chmod(path, 0o755)
        for name in files:
            os.chmod(os.path.join(path, name), 0o755 if os.access(os.path.join(path, name), os.X_OK) else 0o644)


def _dependencies() -> list[importlib.metadata.Distribution]:
    """The installed distributions `agentview serve` needs: pyproject's dependencies and theirs, no extras."""
    wanted = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    found: dict[str, importlib.metadata.Distribution] = {}
    while wanted:
        requirement = Requirement(wanted.pop())
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = requirement.name.lower().replace("_", "-")
        if name not in found:
            found[name] = importlib.metadata.distribution(requirement.name)
            wanted.extend(found[name].requires or [])
    return list(found.values())


def _copy_installed(site: Path) -> None:
    for dist in _dependencies():
        for file in dist.files or []:
            if file.parts[0] == ".." or file.suffix == ".pyc":
                continue  # scripts outside site-packages; bytecode is rebuilt
            source = Path(dist.locate_file(file))
            if source.is_file():
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, site / file)


def _starts(python: str, runtime: Runtime, user: int) -> bool:
    probe = [python, "-c", "import viewer.cli, viewer.web.app"]
    try:
        return subprocess.run(probe, cwd=runtime.code, env=runtime.env(), user=user, capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def runtime_for(user: int) -> Runtime:
    """A copy of what the server needs, in a temp folder `user` may enter, made once per test run."""
    home = Path(tempfile.mkdtemp(prefix="agentview-as-user-"))
    atexit.register(shutil.rmtree, home, True)
    code, site = home / "code", home / "site"
    for name in ("viewer", "templates", "static"):
        shutil.copytree(REPO / name, code / name, ignore=shutil.ignore_patterns("__pycache__"))
    _copy_installed(site)
    (home / "bin").mkdir()
    shutil.copy(sys.executable, home / "bin" / "python")  # as `python -m venv --copies` does
    _readable_by_all(home)
    runtime = Runtime(python="", code=code, site=site)
    candidates = dict.fromkeys([sys.executable, os.path.realpath(sys.executable), sys._base_executable,
                                os.path.realpath(sys._base_executable), str(home / "bin" / "python")])
    for python in candidates:
        if _starts(python, runtime, user):
            return Runtime(python=python, code=code, site=site)
    raise RuntimeError(f"no interpreter user {user} may start imports the server from {home}: tried {list(candidates)}")
