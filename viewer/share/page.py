"""The shared file itself: one HTML page carrying its styles, its scripts and the session's data.

The data travels gzip-compressed and base64-encoded inside the page, in pieces the browser's DecompressionStream
inflates one at a time: the events in parts of PART_EVENTS (so the first screen needs only a few), then the head.
The page is made a piece at a time (`share_pieces`): the server streams it, reading the session a part at a time
under its lock. The page's Content-Security-Policy allows its own two scripts (by hash) and nothing from anywhere,
so it opens from file:// with the network off and can make no request even if a log's text tried to.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Iterator

from isal import isal_zlib
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.index.session_index import SessionIndex
from viewer.reads.session_viewer import load_index
from viewer.web.resources import resource_dir

from .data import Sealer, session_head
from .events import Records

SCRIPTS = ("markdown-it-14.1.0.min.js", "share.js")
STYLES = ("share.css",)
# ISA-L's level 1 (of 0..3): a quarter of zlib level 1's time, for a file a twentieth smaller (a sixth of the log)
GZIP_LEVEL = 1
PART_EVENTS = 2000  # events a part: a first screen inflates a few parts, not the whole session
_PARTS = "\x00parts\x00"  # where the parts go in the template's page


@functools.cache  # its template compiled once (a page is rendered twice a file: above the parts, then below them)
def _environment() -> Environment:
    return Environment(loader=FileSystemLoader(resource_dir("templates")), autoescape=select_autoescape(["html"]))


def _static(name: str) -> str:
    return (resource_dir("static") / name).read_text(encoding="utf-8")


def _hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def compressed(raw: bytes) -> bytes:
    """gzip (not zlib or raw deflate): DecompressionStream("gzip") reads it in every browser that has one."""
    packer = isal_zlib.compressobj(GZIP_LEVEL, isal_zlib.DEFLATED, 31)
    return packer.compress(raw) + packer.flush()


def read_session(path: str) -> SessionIndex:
    """A session file read whole to be shared: its events stay parsed, so each line is parsed once (ingest), not
    again to make the file's data (the walk would hold them all at once anyway)."""
    return load_index(path, Host(Tuning(one_off=True)))


class ShareError(Exception):
    """The session changed under the file being made (it was read again from its start)."""


def _piece(sealed: bytes, attributes: str) -> bytes:
    encoded = base64.b64encode(compressed(sealed))  # base64's letters need no escaping
    return b'<script type="application/gzip+base64"' + attributes.encode() + b">" + encoded + b"</script>\n"


def _page(head: bytes, sealer: Sealer) -> tuple[bytes, bytes]:
    """The page before the parts and after them."""
    scripts = [_static(name).replace("</script", "<\\/script") for name in SCRIPTS]
    page = _environment().get_template("share.html").render(
        styles="\n".join(_static(name) for name in STYLES),
        scripts=scripts,
        script_hashes=" ".join(_hash(script) for script in scripts),
        parts=Markup(_PARTS),
        head=Markup(head.decode("ascii")),
        masked=sealer.masked,
        redacted=sealer.redact_secrets,
    )
    top, bottom = page.split(_PARTS)
    return top.encode("utf-8"), bottom.encode("utf-8")


def share_pieces(s: SessionIndex, agent: str | None = None, redact_secrets: bool = True,
                 anonymize_paths: bool = False) -> Iterator[bytes]:
    """The file for a session, opening on `agent`'s perspective when given, a piece at a time (joined: the file).

    The head is taken now (a fault in it is raised here, before anything is sent); the parts as they are asked for.
    The session's lock is held while the head is taken and while each part's events are read and made records,
    not while they are masked, compressed or sent."""
    with s.lock:
        epoch, count = s.epoch, s.count
        head = session_head(s, agent)
        records = Records(s)
    return _pieces(s, epoch, count, head, records, Sealer(redact_secrets, anonymize_paths))


def _pieces(s: SessionIndex, epoch: int, count: int, head: dict, records: Records, sealer: Sealer) -> Iterator[bytes]:
    yield _page(b"", sealer)[0]  # nothing above the parts depends on the data
    for first in range(0, count, PART_EVENTS):
        stop = min(count, first + PART_EVENTS)
        with s.lock, s.host.gc.batch():
            if s.epoch != epoch:  # (it may have grown past where it was since: its count alone would not tell)
                raise ShareError(f"the session {s.id!r} was read again from its start while it was being shared")
            rows = records.run(first, s.events.walk(first, stop))
        yield _piece(sealer(rows), f' class="agentview-part" data-first="{first}" data-count="{stop - first}"')
        del rows
    head["paired"] = records.paired
    yield _page(_piece(sealer(head), ' id="agentview-data"'), sealer)[1]
