"""An image a log carries, served from a URL of its own (so pages keep `img-src 'self'` and hold no megabytes)."""

from __future__ import annotations

from flask import Blueprint, Response, abort

from viewer.core import images

from .asked import message_or_404, session_or_404

bp = Blueprint("images", __name__)


@bp.get("/s/<session_id>/image/<int:n>/<path:message_id>")
def image(session_id: str, n: int, message_id: str):
    """The n-th image of a message, as the bytes of its media type; 404 when it may not be shown."""
    s = session_or_404(session_id)
    message_or_404(s, message_id)
    event = s.event(message_id) or {}
    shown = event.get("images") if isinstance(event.get("images"), list) else []
    if not 0 <= n < len(shown) or shown[n].get("hidden") is not None:
        abort(404, f"Message {message_id!r} has no image {n} that can be shown.")
    picture = images.image_bytes(images.found(event.get("raw"), shown[n]["at"]))
    if picture is None:  # the line changed since it was read, or its bytes are not what its type says
        abort(404, f"Image {n} of message {message_id!r} cannot be shown.")
    media_type, data = picture
    return Response(data, mimetype=media_type, headers={
        "Content-Security-Policy": "default-src 'none'; sandbox",  # opened alone, it is a picture and nothing else
        "Content-Disposition": "inline",
        "Cache-Control": "private, max-age=3600",
    })
