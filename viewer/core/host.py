"""What the layers below the web share within one running app: its tuning, the requests under way (foreground),
the collector's pauses (gcpause), its pool of open session files (open_files), the shapes its values are packed
with (packed) and the prices costs are shown at.

The app's runtime (library.runtime) makes one and hands it down through constructors; code that runs alone (an
export, a test of one session) makes its own. Nothing of it lives in a module.
"""

from __future__ import annotations

import os
import threading

from . import pricing
from .foreground import Foreground
from .gcpause import GcPause
from .open_files import OpenFiles
from .packed import Shapes
from .tuning import Tuning


class Host:
    def __init__(self, tuning: Tuning | None = None, prices: pricing.Prices | None = None) -> None:
        self.tuning = tuning or Tuning()
        self.foreground = Foreground()
        self.gc = GcPause(collects=not self.tuning.one_off)
        self.files = OpenFiles(self.tuning.open_files)  # what its FileSources keep open: this app's alone
        self.shapes = Shapes()  # the shapes of the values its formats keep packed (StoredEntry)
        # Set once the app is stopping: a first read of thousands of groups ends after the group it reads, so that
        # Ctrl-C or SIGTERM stops a server at once; the groups not read yet are read at the next start
        self.stopping = threading.Event()
        self._prices = prices

    @property
    def prices(self) -> pricing.Prices:
        """The prices in use: those given, else genai-prices' with AGENTVIEW_PRICES over them (read when first
        asked for)."""
        if self._prices is None:
            self._prices = pricing.load(os.environ.get(pricing.ENV) or None)
        return self._prices

    def close(self) -> None:
        self.gc.close()
