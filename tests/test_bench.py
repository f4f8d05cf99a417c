"""A tiny run of the benchmark, so the script cannot rot."""

import subprocess
import sys

from conftest import REPO


def test_benchmark_runs_on_a_small_session():
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench.py"), "--events", "2000",
                             "--agents", "20", "--runs", "2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "events/s" in result.stdout
    assert result.stdout.count("(200)") == 15 and result.stdout.count("(204)") == 3
    assert result.stdout.count("search:") == 8
