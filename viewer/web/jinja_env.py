"""The app's Jinja environment: each template's globals are one dict, not Jinja's ChainMap over the environment's.

Every context a page makes (its includes too) copies them, and every `{% from ... import %}` compares their keys:
key by key in Python over a ChainMap, in C over a dict. Every global is set while the app is made, before a
template loads (as Jinja asks), so the dict taken when a template loads holds them all.
"""

from __future__ import annotations

from flask.templating import Environment


class FlatGlobalsEnvironment(Environment):
    def make_globals(self, d):
        return {**self.globals, **(d or {})}
