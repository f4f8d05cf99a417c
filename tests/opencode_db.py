"""OpenCode's SQLite database as OpenCode writes it: its schema (anomalyco/opencode `session.sql.ts` and its
migrations), WAL mode, rows as it inserts them (a message's and a part's JSON `data` without their ids), and a
sample: a root session whose task calls make a child session that makes one of its own (two levels)."""

from __future__ import annotations

import json
import sqlite3

SCHEMA = """
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text,
  `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_initialized` integer,
  `sandboxes` text NOT NULL, `commands` text);
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL,
  `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
  `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer, `workspace_id` text, `path` text, `agent` text, `model` text,
  `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);
CREATE TABLE `todo` (`session_id` text NOT NULL, `content` text NOT NULL, `status` text NOT NULL,
  `priority` text NOT NULL, `position` integer NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`));
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
"""

T0 = 1767261600000  # 2026-01-01T10:00:00Z, in ms as OpenCode stores times
ROOT, CHILD, GRANDCHILD = "ses_4a1b2c3d4e5fRootAAAAAAAA", "ses_4a1b2c3d4e60ChildBBBBBBB", "ses_4a1b2c3d4e61GrandCCCCCCC"
MODEL = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}


class OpenCodeDb:
    """Writes rows as OpenCode's Session and MessageV2 code inserts them (insert, then upsert on update)."""

    def __init__(self, path, create: bool = True):
        self.db = sqlite3.connect(path, isolation_level=None)
        if create:
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.executescript(SCHEMA)
            self.db.execute("INSERT INTO project VALUES ('prj_1', '/home/ada/parser', 'git', NULL, NULL, NULL, ?, ?, "
                            "NULL, '[]', NULL)", (T0, T0))

    def session(self, sid, title, t, parent=None):
        self.db.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created,"
                        " time_updated) VALUES (?, 'prj_1', ?, ?, '/home/ada/parser', ?, '1.1.40', ?, ?)",
                        (sid, parent, sid[-8:].lower(), title, t, t))

    def message(self, mid, sid, t, role, **info):
        data = {"role": role, "time": {"created": t, **({"completed": t + 900} if role == "assistant" else {})}}
        if role == "user":
            data.update(agent="build", model=MODEL)
        else:
            data.update(parentID=info.pop("parent", ""), modelID=MODEL["modelID"], providerID="anthropic",
                        mode="build", agent="build", path={"cwd": "/home/ada/parser", "root": "/home/ada/parser"},
                        cost=0, tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}})
        data.update(info)
        self.db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, json.dumps(data)))

    def part(self, pid, mid, sid, t, **data):
        self.db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data,"
                        " time_updated = excluded.time_updated", (pid, mid, sid, t, t, json.dumps(data)))

    def update_part(self, pid, t, **data):
        self.db.execute("UPDATE part SET data = ?, time_updated = ? WHERE id = ?", (json.dumps(data), t, pid))

    def close(self):
        self.db.close()


class OpenCodeStorageTree:
    """The same rows as the older JSON storage tree holds them (storage.ts: `JSON.stringify(content, null, 2)`, one
    document per session, message and part, each with its ids; json-migration.ts reads them back)."""

    def __init__(self, folder):
        self.folder = folder
        self.parts = {}

    def _write(self, key, doc):
        path = self.folder.joinpath(*key[:-1], key[-1] + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".oc-{path.name}.tmp")  # written whole, then renamed over it
        temporary.write_text(json.dumps(doc, indent=2))
        temporary.rename(path)

    def session(self, sid, title, t, parent=None):
        doc = {"id": sid, "slug": sid[-8:].lower(), "version": "0.15.0", "projectID": "prj_1",
               "directory": "/home/ada/parser", "title": title, "time": {"created": t, "updated": t}}
        if parent:
            doc["parentID"] = parent
        self._write(["session", "prj_1", sid], doc)

    def message(self, mid, sid, t, role, **info):
        data = {"id": mid, "sessionID": sid, "role": role, "time": {"created": t}}
        if role == "assistant":
            data.update(parentID=info.pop("parent", ""), modelID=MODEL["modelID"], providerID="anthropic", mode="build",
                        cost=0, tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}})
        self._write(["message", sid, mid], {**data, **info})

    def part(self, pid, mid, sid, t, **data):
        self.parts[pid] = (mid, sid)
        self._write(["part", mid, pid], {"id": pid, "sessionID": sid, "messageID": mid, **data})

    def update_part(self, pid, t, **data):
        self.part(pid, *self.parts[pid], t, **data)

    def close(self):
        pass


def tool(call_id, name, status, given, t, end=None, **state):
    """A tool part's data in one of its states (message-v2.ts ToolState*), started at `t`, ended at `end`."""
    st = {"status": status, "input": given}
    end = t + 50 if end is None else end
    if status == "running":
        st.update(time={"start": t}, **state)
    elif status == "completed":
        st.update(title=state.pop("title", name), metadata=state.pop("metadata", {}), time={"start": t, "end": end},
                  **state)
    elif status == "error":
        st.update(time={"start": t, "end": end}, **state)
    else:
        st["raw"] = ""
    return {"type": "tool", "callID": call_id, "tool": name, "state": st}


def task_done(call_id, given, started, ended, child, answer):
    """A task part once its child session answered (task.ts: `task_id: ...` and the answer in <task_result>)."""
    return tool(call_id, "task", "completed", given, started, ended, metadata={"sessionId": child, "model": MODEL},
                output=f"task_id: {child} (for resuming to continue this task if needed)\n\n<task_result>\n{answer}\n"
                       "</task_result>")


def step_finish(t, input_tokens, output, read, write, cost):
    return {"type": "step-finish", "reason": "tool-calls", "cost": cost,
            "tokens": {"input": input_tokens, "output": output, "reasoning": 0, "cache": {"read": read, "write": write}}}


def prompt(w, sid, n, t, text):
    """A user message of one text part (ids msg_<n>, prt_<n>)."""
    w.message(f"msg_{n}", sid, t, "user")
    w.part(f"prt_{n}", f"msg_{n}", sid, t, type="text", text=text)


def answer(w, sid, n, t, text, tokens):
    """An assistant message answering in one text part, then its step's usage (prt_<n>, prt_<n + 1>)."""
    w.message(f"msg_{n}", sid, t, "assistant")
    w.part(f"prt_{n}", f"msg_{n}", sid, t + 1, type="text", text=text, time={"start": t + 1, "end": t + 2})
    w.part(f"prt_{n + 1}", f"msg_{n}", sid, t + 3, **step_finish(t + 3, *tokens))


def write_sample(path, writer=OpenCodeDb) -> OpenCodeDb:
    """A root session (a prompt, reasoning, a bash call, a failing read, a task call) whose child session calls a
    task of its own (two levels), each answering; usage on every step."""
    w = writer(path)
    w.session(ROOT, "Fix the parser's last token", T0)
    w.message("msg_001", ROOT, T0 + 10, "user")
    w.part("prt_001", "msg_001", ROOT, T0 + 10, type="text", text="parse() drops the last token. Find why and fix it.")
    w.message("msg_002", ROOT, T0 + 20, "assistant", parent="msg_001")
    w.part("prt_002", "msg_002", ROOT, T0 + 21, type="step-start")
    w.part("prt_003", "msg_002", ROOT, T0 + 22, type="reasoning", text="Look at the tokenizer first.",
           time={"start": T0 + 22, "end": T0 + 25})
    w.part("prt_004", "msg_002", ROOT, T0 + 26, **tool("call_bash", "bash", "completed", {"command": "rg -n parse src"},
                                                     T0 + 26, T0 + 26, output="src/parse.py:12: def parse(text):"))
    w.part("prt_005", "msg_002", ROOT, T0 + 27, **tool("call_read", "read", "error", {"filePath": "/nope.py"}, T0 + 27,
                                                     T0 + 27, error="Error: File not found: /nope.py"))
    w.part("prt_006", "msg_002", ROOT, T0 + 28, **step_finish(T0 + 28, 5000, 300, 12000, 400, 0.0123))
    w.message("msg_003", ROOT, T0 + 30, "assistant", parent="msg_001")
    task_in = {"description": "Find covering tests", "prompt": "Which tests cover parse()?", "subagent_type": "general"}
    w.part("prt_007", "msg_003", ROOT, T0 + 31, **tool("call_task1", "task", "running", task_in, T0 + 31))
    w.session(CHILD, "Find covering tests (@general subagent)", T0 + 32, parent=ROOT)
    w.update_part("prt_007", T0 + 33, **tool("call_task1", "task", "running", task_in, T0 + 31,
                                              metadata={"sessionId": CHILD, "model": MODEL}))
    prompt(w, CHILD, 101, T0 + 34, "Which tests cover parse()?")
    w.message("msg_102", CHILD, T0 + 40, "assistant", parent="msg_101")
    sub_in = {"description": "List test files", "prompt": "List the test files.", "subagent_type": "explore"}
    w.part("prt_102", "msg_102", CHILD, T0 + 41, **tool("call_task2", "task", "running", sub_in, T0 + 41,
                                                      metadata={"sessionId": GRANDCHILD}))
    w.session(GRANDCHILD, "List test files (@explore subagent)", T0 + 42, parent=CHILD)
    prompt(w, GRANDCHILD, 201, T0 + 43, "List the test files.")
    answer(w, GRANDCHILD, 202, T0 + 44, "tests/test_parse.py", (800, 20, 0, 0, 0.001))
    w.update_part("prt_102", T0 + 48, **task_done("call_task2", sub_in, T0 + 41, T0 + 48, GRANDCHILD,
                                                   "tests/test_parse.py"))
    answer(w, CHILD, 104, T0 + 50, "tests/test_parse.py covers parse().", (1500, 60, 0, 0, 0.002))
    w.update_part("prt_007", T0 + 60, **task_done("call_task1", task_in, T0 + 31, T0 + 60, CHILD,
                                                   "tests/test_parse.py covers parse()."))
    w.message("msg_004", ROOT, T0 + 70, "assistant", parent="msg_001")
    w.part("prt_008", "msg_004", ROOT, T0 + 71, type="text", text="Fixed: the loop stopped one token early.",
           time={"start": T0 + 71, "end": T0 + 72})
    w.part("prt_009", "msg_004", ROOT, T0 + 73, **step_finish(T0 + 73, 6000, 120, 15000, 0, 0.0201))
    return w
