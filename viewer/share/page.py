"""The shared file itself: one HTML page carrying its styles, its scripts and the session's data.

The data travels gzip-compressed and base64-encoded inside the page and is inflated by the browser's
DecompressionStream; the page's Content-Security-Policy allows its own two scripts (by hash) and nothing
from anywhere, so it opens from file:// with the network off and can make no request even if a log's
text tried to.
"""

from __future__ import annotations

import base64
import hashlib

from isal import isal_zlib
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from viewer.core.host import Host
from viewer.core.tuning import Tuning
from viewer.index.session_index import SessionIndex
from viewer.reads.session_viewer import load_index
from viewer.web.resources import resource_dir

from .data import sealed, session_data

SCRIPTS = ("markdown-it-14.1.0.min.js", "share.js")
STYLES = ("share.css",)
# ISA-L's level 1 (of 0..3): a quarter of zlib level 1's time, for a file a twentieth smaller (a sixth of the log)
GZIP_LEVEL = 1


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


def share_html(s: SessionIndex, agent: str | None = None, redact_secrets: bool = True,
               anonymize_paths: bool = False) -> bytes:
    """The whole file for a session, opening on `agent`'s perspective when given."""
    raw, masked = sealed(session_data(s, agent), redact_secrets, anonymize_paths)
    scripts = [_static(name).replace("</script", "<\\/script") for name in SCRIPTS]
    page = _environment().get_template("share.html").render(
        styles="\n".join(_static(name) for name in STYLES),
        scripts=scripts,
        script_hashes=" ".join(_hash(script) for script in scripts),
        data=Markup(base64.b64encode(compressed(raw)).decode("ascii")),  # base64's letters need no escaping
        masked=masked,
        redacted=redact_secrets,
    )
    return page.encode("utf-8")
