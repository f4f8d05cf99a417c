"""Images in Claude Code user messages and tool results: described by the format, served from their own URL, only
safe raster types under a byte cap, their bytes checked against their type."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from claude_lines import Transcript
from viewer.core import images


def png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG: red pixels, RGB, one IDAT."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def block(data: bytes, media_type: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                        "data": base64.b64encode(data).decode()}}


def write_session(folder):
    t = Transcript("5e551011-imgs", "im")
    t.user([{"type": "text", "text": "what is in this screenshot?"}, block(png(40, 30))])
    t.response("msg_1", [{"type": "tool_use", "id": "toolu_SHOT", "name": "Screenshot", "input": {}}])
    t.user([{"type": "tool_result", "tool_use_id": "toolu_SHOT", "content": [
        {"type": "text", "text": "taken"}, block(png(5, 5)),
        block(b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>", "image/svg+xml"),
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * (8 * 1024 * 1024)}},
        block(b"GIF89a not a png", "image/png")]}])
    t.response("msg_2", [{"type": "text", "text": "A red square."}])
    return t.write(folder / "-home-dev-app" / "5e551011-imgs.jsonl")


def test_described_hides_svg_other_sources_and_what_is_over_the_cap():
    assert images.described(block(png())["source"], ["a"])["hidden"] is None
    assert "not shown" in images.described(block(b"<svg/>", "image/svg+xml")["source"], [])["hidden"]
    assert images.described({"type": "url", "url": "http://x/y.png"}, [])["hidden"] == "not carried in the log"
    big = images.described({"type": "base64", "media_type": "image/png", "data": "A" * 8_000_000}, [])
    assert big["size"] == 6_000_000 and "too large" in big["hidden"]
    assert images.described(None, [])["media_type"] == "image"
    assert images.described(block(b"GIF89a....")["source"], [])["hidden"] == "its bytes are not image/png"


def test_image_bytes_checks_base64_and_the_type_its_bytes_are():
    assert images.image_bytes(block(png())["source"]) == ("image/png", png())
    assert images.image_bytes(block(b"GIF89a....", "image/png")["source"]) is None  # not what it says it is
    assert images.image_bytes(block(b"GIF89a....", "image/gif")["source"]) == ("image/gif", b"GIF89a....")
    assert images.image_bytes({"type": "base64", "media_type": "image/png", "data": "!!not base64!!"}) is None
    assert images.image_bytes(block(b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp")["source"]) is not None
    assert images.image_bytes(block(b"RIFF\x00\x00\x00\x00WAVEfmt ", "image/webp")["source"]) is None


@pytest.fixture
def images_app(tmp_path):
    from viewer.web.app import create_app

    write_session(tmp_path)
    return create_app(tmp_path, watch=False)


def test_the_format_names_each_image_by_where_it_lies_and_keeps_no_bytes(images_app):
    s = images_app.extensions["agentview"].library.get("-home-dev-app:5e551011-imgs")
    prompt = s.event("im-0001")
    assert [(i["media_type"], i["hidden"], i["at"]) for i in prompt["images"]] == [
        ("image/png", None, ["message", "content", 1, "source"])]
    result = s.event("im-0003")
    assert [i["hidden"] for i in result["images"]][:1] == [None]
    assert [i["hidden"] for i in result["images"]][3] == "its bytes are not image/png"
    assert result["images"][3]["at"] == ["message", "content", 0, "content", 4, "source"]
    stored = s.events.stored(s.count)[s.by_id["im-0003"]]
    assert "iVBOR" not in repr(stored.skeleton)  # the bytes stay in the file


def test_each_image_is_served_from_its_own_url_and_refused_ones_are_404(images_app):
    client = images_app.test_client()
    sid = "-home-dev-app:5e551011-imgs"
    answer = client.get(f"/s/{sid}/image/0/im-0001")
    assert answer.status_code == 200 and answer.mimetype == "image/png" and answer.data == png(40, 30)
    assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get(f"/s/{sid}/image/0/im-0003").data == png(5, 5)
    for n in (1, 2, 3, 4, 9):  # svg, too large, bytes not of its type, no such image
        assert client.get(f"/s/{sid}/image/{n}/im-0003").status_code == 404, n
    assert client.get(f"/s/{sid}/image/0/nope").status_code == 404
    page = client.get(f"/s/{sid}/agents/main").get_data(as_text=True)
    assert f'src="/s/{sid}/image/0/im-0001"' in page and f'src="/s/{sid}/image/0/im-0003"' in page
    assert "image/svg+xml, 59 bytes: image/svg+xml is not shown" in page
    assert "6.0 MB: too large to show" in page
    assert "data:image" not in page and "onload=" not in page
