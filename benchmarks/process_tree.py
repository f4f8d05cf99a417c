"""A started program and every process under it: resident memory summed over them all, CPU children included.

`Tree(argv)` starts it; a thread samples /proc every 0.1 s: the sum of VmRSS over the process and its
descendants (its peak is `peak_rss`), and each process's user + system CPU, so that CPU of workers that are
still running counts too. `stop()` ends it with SIGTERM and reads its CPU from `os.wait4`, which includes every
child it waited for, and every descendant it left behind (a worker a server ended by SIGTERM never waits for):
this process is their reaper (PR_SET_CHILD_SUBREAPER), so their own wait4 counts them once they end.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SUBREAPER = 36  # prctl's PR_SET_CHILD_SUBREAPER (Linux)
ORPHANS_END_WITHIN = 15.0  # seconds a descendant left behind takes to end (a read worker: at its pipe's end)


def _adopt_orphans() -> None:
    """Become the parent of descendants whose parent ends before them, so that their CPU is read by wait4 (else
    they go to init and their CPU to nobody)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, own CPU s, waited-for children's CPU s) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except OSError:
        return 0


def descendants(root: int) -> list[int]:
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) is not None:
            parents[int(name)] = stat[0]
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


class Tree:
    def __init__(self, argv: list[str], env: dict | None = None, cwd=None, stdout=subprocess.DEVNULL) -> None:
        _adopt_orphans()
        self.started = time.perf_counter()
        self.process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT, text=True)
        self.peak_rss = 0
        self.rusage = None  # os.wait4's, once it has ended
        self.orphans_cpu = 0.0  # CPU of descendants it left behind, reaped here (`_reap_orphans`)
        self._cpu: dict[int, float] = {}  # the last CPU seen of each descendant, gone ones included
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(0.1):
            pids = [self.process.pid, *descendants(self.process.pid)]
            self.peak_rss = max(self.peak_rss, sum(_rss(pid) for pid in pids))
            for pid in pids[1:]:
                if (stat := _stat(pid)) is not None:
                    self._cpu[pid] = stat[1]

    def cpu_seconds(self) -> float:
        """CPU so far: the process's own and its reaped children's, plus every descendant seen (live or not)."""
        stat = _stat(self.process.pid)
        own = stat[1] + stat[2] if stat else 0.0
        return own + sum(self._cpu.values())

    def until_idle(self, deadline: float, quiet: float = 8.0) -> float:
        """Seconds from the start until the tree last worked before it used under 5% of a core for `quiet` s
        (longer than agentview's idle server waits between two looks for sessions to save)."""
        last, still = self.cpu_seconds(), time.perf_counter()
        while time.perf_counter() < deadline and time.perf_counter() - still < quiet:
            time.sleep(0.5)
            used = self.cpu_seconds()
            if used - last > 0.05 * 0.5:  # 5% of a core: an idle agentview server uses about 3% (its looks)
                still = time.perf_counter()
            last = used
        return still - self.started

    def _wait4(self, timeout: float) -> bool:
        """Reap it with wait4, keeping its resource usage (children it waited for included)."""
        deadline = time.perf_counter() + timeout
        while self.rusage is None:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                self.rusage, self.process.returncode = usage, os.waitstatus_to_exitcode(status)
            elif time.perf_counter() > deadline:
                return False
            else:
                time.sleep(0.05)
        return True

    def wait(self, timeout: float = 3600) -> dict:
        """Wait for it to end by itself: its CPU (children included) and peak memory."""
        if not self._wait4(timeout):
            raise TimeoutError(f"{self.process.args[0]} still runs after {timeout} s")
        return self._reaped()

    def stop(self) -> dict:
        sampled = self.cpu_seconds()
        if self.rusage is None:
            self.process.send_signal(signal.SIGTERM)
            if not self._wait4(15):
                self.process.kill()
                self._wait4(15)
        return {**self._reaped(), "cpu_sampled_s": round(sampled, 2)}  # sampled: a reaped worker may count twice

    def _reap_orphans(self) -> None:
        """Wait for the descendants seen that were left to this process, adding their CPU (one the program waited
        for is not a child here: its CPU is in the program's own wait4)."""
        deadline = time.perf_counter() + ORPHANS_END_WITHIN
        for pid in list(self._cpu):
            while True:
                try:
                    found, _, usage = os.wait4(pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if found:
                    self.orphans_cpu += usage.ru_utime + usage.ru_stime
                    break
                if time.perf_counter() > deadline:  # it hangs (a child not waited for: the pid is still its)
                    os.kill(pid, signal.SIGKILL)
                time.sleep(0.05)

    def _reaped(self) -> dict:
        self._done.set()
        self._reap_orphans()
        cpu = self.rusage.ru_utime + self.rusage.ru_stime + self.orphans_cpu
        return {"cpu_s": round(cpu, 2), "peak_rss_mb": round(self.peak_rss / 2**20, 1)}
