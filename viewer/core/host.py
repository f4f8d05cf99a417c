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
from .genai_rates import Table
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
        self.rates: Table | None = None  # where genai-prices' models are kept between runs (keep_rates)

    @property
    def prices(self) -> pricing.Prices:
        """The prices in use: those given, else genai-prices' with AGENTVIEW_PRICES over them (read when first
        asked for)."""
        if self._prices is None:
            self._prices = pricing.load(os.environ.get(pricing.ENV) or None)
            if self.rates is not None:
                self._prices.catalog.keep(self.rates)
        return self._prices

    def keep_rates(self, table: Table) -> None:
        """Keep genai-prices' models in `table` (store.kept_rates) from now on: given before a cost is asked for, a
        process whose models are all kept never imports genai-prices."""
        self.rates = table
        if self._prices is not None:
            self._prices.catalog.keep(table)

    def close(self) -> None:
        self.gc.close()
