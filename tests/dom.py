"""A small stdlib HTML reader for assertions: elements by id, their text and descendants."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Element:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children: list[Element] = []
        self.parts: list[str | Element] = []

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text for p in self.parts)

    def iter(self):
        for child in self.children:
            yield child
            yield from child.iter()

    def find_all(self, tag=None, **attrs):
        return [e for e in self.iter()
                if (tag is None or e.tag == tag) and all(e.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def by_id(self, element_id):
        found = [e for e in self.iter() if e.attrs.get("id") == element_id]
        return found[0] if found else None


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#document", {})

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs, self.current)
        self.current.children.append(element)
        self.current.parts.append(element)
        if tag not in VOID:
            self.current = element

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.parts.append(data)


def parse(html: str | bytes) -> Element:
    builder = _Builder()
    builder.feed(html.decode() if isinstance(html, bytes) else html)
    return builder.root
