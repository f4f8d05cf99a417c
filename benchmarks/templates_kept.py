#!/usr/bin/env python3
"""CPU to make every page template ready: compiled on a first start, loaded from the cache on the next ones.

    .venv/bin/python benchmarks/templates_kept.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from viewer.web.app import close_app, create_app  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as cache:
        for run in range(args.runs):
            app = create_app(folder, watch=False, cache_dir=cache)
            env = app.jinja_env
            names = [name for name in env.list_templates() if name.endswith(".html")]
            start = time.process_time()
            for name in names:
                env.get_template(name)
            spent = (time.process_time() - start) * 1000
            print(f"start {run + 1}: {len(names)} templates ready in {spent:.0f} ms of CPU"
                  f" ({'compiled' if run == 0 else 'loaded from the cache'})")
            close_app(app)


if __name__ == "__main__":
    main()
