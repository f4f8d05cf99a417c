"""Run a coroutine to completion from a test, even after the browser tests.

pytest-playwright's sync API keeps an event loop running in the main thread, where
asyncio.run refuses to start another one; a worker thread has no loop of its own.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def in_thread(function, *args):
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args).result(timeout=60)


def run(coroutine):
    return in_thread(asyncio.run, coroutine)


def write_demo(folder, speed: float = 1000.0):
    """`agentview demo` written into `folder` (fast), from any thread: its path."""
    from viewer.writer.demo import run as run_demo

    return in_thread(run_demo, folder, speed)
