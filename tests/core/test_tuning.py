"""The tuning knobs are declared once, each with what it bounds, and an app's knobs reach what they bound."""

from __future__ import annotations

from dataclasses import fields

from viewer.core.tuning import Limits, Tuning, help_table
from viewer.web.app import close_app, create_app
from viewer.web.state import KEY


def test_every_knob_says_what_it_bounds():
    table = help_table()
    assert [name for name, _, _ in table] == [f.name for f in fields(Tuning)]
    assert all(len(help) > 10 and "\n" not in help for _, _, help in table)
    assert dict((name, default) for name, default, _ in table) == vars(Tuning())
    assert all(len(help) > 10 for _, _, help in help_table(Limits))


def test_an_apps_knobs_reach_its_library_its_sessions_and_their_readers(tmp_path):
    (tmp_path / "s.jsonl").write_text('{"message_id": "m0", "event_type": "agent_created", "agent_id": "a"}\n')
    tuning = Tuning(limits=Limits(max_line_bytes=1000), event_cache_bytes=1234)
    app = create_app(tmp_path, watch=False, tuning=tuning)
    try:
        library = app.extensions[KEY].library
        s = library.get("s")
        assert library.host.tuning is s.host.tuning is tuning and s.events._tuning is tuning
        (reader,) = library._tailers.values()
        assert reader.limits is tuning.limits
    finally:
        close_app(app)
