"""Where the templates/ and static/ folders are: inside the package when installed from a wheel, else the checkout's."""

from __future__ import annotations

from pathlib import Path


def resource_dir(name: str) -> Path:
    package = Path(__file__).resolve().parent.parent
    installed = package / f"_{name}"
    return installed if installed.is_dir() else package.parent / name
