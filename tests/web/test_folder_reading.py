"""While a first walk's groups wait to be read, `/` says how many of the folder's sessions are read (and marks each
row not read yet, rather than showing it empty) and `/api/status` counts them; both stop once every session is read."""

from __future__ import annotations

import re

from conftest import write_events
from events import created, say
from test_unread_groups import generate
from viewer.core.tuning import Tuning
from viewer.web.app import close_app, create_app
from viewer.web.state import KEY


def test_the_list_and_the_status_say_how_far_a_first_read_of_the_folder_has_come(tmp_path):
    projects = tmp_path / ".claude" / "projects"
    projects.mkdir(parents=True)
    app = create_app(projects, watch=False)
    library, client = app.extensions[KEY].library, app.test_client()
    try:
        empty = client.get("/api/status").get_json()
        assert empty == {"sessions": 0, "unread": 0, "indexing": 0, "reading": 0, "scanning": False,
                         "version": empty["version"]}
        generate(tmp_path, sessions=6, projects=2)
        with library.groups.read_after():  # listed now, read when the walk ends (as a first scan does)
            for path in library.folders.session_files(None):
                library.refresh(path)
            status = client.get("/api/status").get_json()
            assert (status["sessions"], status["unread"], status["indexing"]) == (6, 6, 0)
            assert status["version"] > empty["version"]
            page = client.get("/").get_data(as_text=True)
            line = re.search(r'<p class="folder-reading" id="av-folder-reading" role="status">(.*?)</p>', page, re.S)
            assert line and "Reading the folder: 0 of 6 sessions read." in " ".join(line.group(1).split())
            assert page.count('<span class="badge progress">not read yet</span>') == 6  # not "0 messages"
            assert page.count('data-label="messages">–</td>') == 6
        status = client.get("/api/status").get_json()
        assert (status["sessions"], status["unread"], status["indexing"]) == (6, 0, 0)
        page = client.get("/").get_data(as_text=True)
        assert "av-folder-reading" not in page and "not read yet" not in page
    finally:
        close_app(app)



def test_the_status_counts_a_big_file_read_in_slices_until_it_is_read_whole(tmp_path):
    app = create_app(tmp_path, watch=False, tuning=Tuning(batch_bytes=64 * 1024))
    library, client = app.extensions[KEY].library, app.test_client()
    try:
        path = write_events(tmp_path / "big.jsonl", [created("c0", "root")] +
                            [say(f"m{i}", "root", f"answer {i} " + "x" * 200) for i in range(3000)])
        library.slices_per_read = 1
        library.refresh(str(path))  # one slice of 64 kB: listed, read in part
        assert client.get("/api/status").get_json()["reading"] == 1
        while library.take_unfinished():
            library.refresh(str(path))
        assert client.get("/api/status").get_json()["reading"] == 0
    finally:
        close_app(app)
