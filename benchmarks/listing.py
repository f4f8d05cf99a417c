"""What listing a folder costs in one process, its groups not read: the first walk (CPU, peak RSS), then the
sessions list's answers (`/api/sessions` three times, `/` and its poll: CPU and size of each).

    .venv/bin/python benchmarks/listing.py FOLDER [--repo CHECKOUT]     # CHECKOUT: another version to time

The walk is timed alone: the groups it lists are not read (Groups.read does nothing here), as in the first seconds
of a cold start of 20,000 sessions, before the first is read. Alternate checkouts (`--repo`) to compare them.
"""

from __future__ import annotations

import resource
import tempfile
import time

import timing


def main() -> None:
    args = timing.folder_in_checkout(__doc__)
    from viewer.library import groups
    from viewer.web.app import close_app, create_app

    groups.Groups.read = lambda self, *read: None  # listed, never read
    with tempfile.TemporaryDirectory(prefix="listing-") as cache:
        cpu = time.process_time()
        app = create_app(args.folder, watch=False, cache_dir=cache)
        walked = time.process_time() - cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        client = app.test_client()
        answers = []
        for path in ("/api/sessions", "/api/sessions", "/api/sessions", "/", "/poll/sessions"):
            cpu = time.process_time()
            body = client.get(path).data
            answers.append(f"{path} {(time.process_time() - cpu) * 1000:.0f} ms ({len(body) / 1e6:.1f} MB)")
        listed = len(app.extensions["agentview"].library.listing())
        close_app(app)
    print(f"{args.repo}: {listed:,} listed; walk {walked:.2f} s CPU, peak RSS {peak} MB; " + "; ".join(answers))


if __name__ == "__main__":
    main()
