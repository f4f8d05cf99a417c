"""Which session each file a Library lists belongs to, and which files a scan lists anew."""

from __future__ import annotations

import contextlib


class ListedFiles(dict):
    """Every file a Library lists -> its session. While `noting`, every file listed that was not listed before is
    noted as it is listed: a watcher asks a folder's scan for the files it listed anew (a move told late may be one
    of them) at a cost that follows those files, not every file listed. One noting at a time (the ingest thread's).

    A dict, so that looking a file up costs what a dict's lookup costs; its three writes note what they change."""

    def __init__(self) -> None:
        super().__init__()
        self._anew: dict[str, None] | None = None  # the files listed anew so far, in order (None: not noting)
        self._before: set[str] = set()  # files forgotten meanwhile that were listed before: listed again, not anew

    @contextlib.contextmanager
    def noting(self):
        """Yields a list which holds, once the block is over, the files listed then that were not listed before."""
        anew: list[str] = []
        self._anew, self._before = {}, set()
        try:
            yield anew
        finally:
            anew.extend(self._anew)
            self._anew, self._before = None, set()

    def __setitem__(self, path: str, session) -> None:
        if self._anew is not None and path not in self and path not in self._before:
            self._anew[path] = None
        super().__setitem__(path, session)

    def __delitem__(self, path: str) -> None:
        super().__delitem__(path)
        self._forgotten(path)

    def pop(self, path: str, *default):
        if self._anew is not None and path in self:
            self._forgotten(path)
        return super().pop(path, *default)

    def _forgotten(self, path: str) -> None:
        if self._anew is None:
            return
        if path in self._anew:  # listed anew, then forgotten: not listed after all
            del self._anew[path]
        else:
            self._before.add(path)
