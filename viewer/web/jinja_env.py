"""The app's Jinja environment: each template's globals are one dict, where Jinja chains the template's own over
the environment's (a ChainMap).

Jinja copies a template's globals into every context it makes (each page, include and macro import), and on each
`{% from ... import %}` compares their keys with the imported template's: over a ChainMap both go key by key in
Python (the app has about 35 globals), over a dict in C. Every global is set while the app is made, before a
template loads (as Jinja asks: its ChainMap only spares a template's globals from changing the environment's), so
the dict taken when a template loads holds them all.
"""

from __future__ import annotations

from flask.templating import Environment


class FlatGlobalsEnvironment(Environment):
    def make_globals(self, d):
        return {**self.globals, **(d or {})}
