"""What the layers below the web share within one running app: its tuning, the requests under way (foreground),
the collector's pauses (gcpause) and the prices costs are shown at.

The app's runtime (library.runtime) makes one and hands it down through constructors; code that runs alone (an
export, a test of one session) makes its own. Nothing of it lives in a module.
"""

from __future__ import annotations

import os

from . import pricing
from .foreground import Foreground
from .gcpause import GcPause
from .tuning import Tuning


class Host:
    def __init__(self, tuning: Tuning | None = None, prices: pricing.Prices | None = None) -> None:
        self.tuning = tuning or Tuning()
        self.foreground = Foreground()
        self.gc = GcPause(collects=not self.tuning.one_off)
        self._prices = prices

    @property
    def prices(self) -> pricing.Prices:
        """The prices in use: those given, else the shipped table with AGENTVIEW_PRICES over it (read when first
        asked for)."""
        if self._prices is None:
            self._prices = pricing.load(os.environ.get(pricing.ENV) or None)
        return self._prices

    def close(self) -> None:
        self.gc.close()
