"""An agent page's request traced call by call, as benchmarks/module_walk.py traces it: the modules it passes
through stay few, and no call goes up the layers (a lower layer calling back into a higher one)."""

from __future__ import annotations

import importlib.util
import shutil

import test_layers
from conftest import REPO, SAMPLES

from viewer.core import lockorder
from viewer.web.app import create_app

MOST_MODULES = 29  # under the 30 an agent page passed through before the layers became packages (it was 36 after)


def _module_walk():
    spec = importlib.util.spec_from_file_location("module_walk", REPO / "benchmarks" / "module_walk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.LAYERS = test_layers.LAYERS
    return module


def test_an_agent_page_passes_through_few_modules_and_never_calls_up_the_layers(tmp_path, monkeypatch):
    # The walk of the code as it serves: without the checks only tests and debug runs make (shapes, lock order).
    monkeypatch.setenv("AGENTVIEW_CHECK_SHAPES", "0")
    monkeypatch.setattr(lockorder, "CHECKING", False)
    shutil.copy(SAMPLES / "example1_jack_and_jill.jsonl", tmp_path / "jack_and_jill.jsonl")
    client = create_app(tmp_path, watch=False).test_client()
    url = "/s/jack_and_jill/agents/agent_jill"
    assert client.get(url).status_code == 200  # the second request is the one traced: warm, as a reader's next

    visited, _, upward, _ = _module_walk().walk(lambda: client.get(url))

    assert upward == 0, visited
    assert len(visited) <= MOST_MODULES, " > ".join(visited)
