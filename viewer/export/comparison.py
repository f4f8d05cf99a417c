"""A comparison of two runs (reads/compare.py) as plain text, for `agentview diff`: the verdict and the first
divergence first, then what differs in sum, per run and per agent pair, then each differing pair's changes."""

from __future__ import annotations

from viewer.reads.costs import usd

LABELS = {"entries": "entries", "tool_calls": "tool calls", "failures": "failures", "agents_spawned": "agents spawned",
          "input_tokens": "input tokens", "output_tokens": "output tokens", "cost_usd": "cost", "seconds": "time"}
CHANGES_PRINTED = 5  # changes of each differing pair printed (the JSON has every one)


def _value(name: str, value) -> str:
    if value is None:
        return "-"
    if name == "cost_usd":
        return usd(value)
    if name == "seconds":
        return f"{value:.1f} s"
    return f"{value:,}"


def _run(side: str, run: dict, totals: dict) -> str:
    where = f" from agent {run['agent_id']}" if run["agent_id"] else ""
    when = f" as of event {run['as_of']}" if run["as_of"] is not None else ""
    return f"{side}: {run['title']} ({run['path']}){where}{when}: {run['events']:,} events, {totals['agents']} agents"


def _entry(side: str, entry: dict | None) -> str:
    if entry is None:
        return f"  {side}: (nothing)"
    tools = f" {', '.join(entry['tools'])}" if entry["tools"] else ""
    text = " ".join(entry["text"].split())
    return f"  {side} #{entry['index'] + 1} {entry['kind'].upper()}{tools}: {text[:200]}"


def _differences(a: dict, b: dict) -> str:
    return ", ".join(f"{label} {_value(name, a[name])} -> {_value(name, b[name])}"
                     for name, label in LABELS.items() if a.get(name) != b.get(name))


def comparison_text(data: dict) -> str:
    lines = [_run("A", data["a"], data["totals"]["a"]), _run("B", data["b"], data["totals"]["b"]), ""]
    first = data["first_divergence"]
    if data["agree"]:
        lines.append("The runs agree: every agent matched and every transcript holds the same entries.")
    elif first["agents_differ"]:
        lines.append("The runs differ in their agents only.")
    else:
        lines.append(f"The runs differ. First divergence: {first['a']['name']}, entry {first['a_index'] + 1}"
                     + (f" (B: {first['b_index'] + 1})" if first["b_index"] != first["a_index"] else ""))
        lines += [_entry("A", first["a_entry"]), _entry("B", first["b_entry"])]
    in_sum = _differences(data["totals"]["a"], data["totals"]["b"])
    if data["totals"]["a"]["agents"] != data["totals"]["b"]["agents"]:
        in_sum = f"agents {data['totals']['a']['agents']} -> {data['totals']['b']['agents']}" + (
            f", {in_sum}" if in_sum else "")
    lines += ["", f"In sum: {in_sum or 'the same'}"]
    for side in ("a", "b"):
        if data[f"only_in_{side}"]:
            names = ", ".join(agent["name"] for agent in data[f"only_in_{side}"])
            lines.append(f"Only in {side.upper()}: {names}")
    for pair in data["pairs"]:
        name = pair["a"]["name"] + (f" <-> {pair['b']['name']}" if pair["b"]["name"] != pair["a"]["name"] else "")
        state = "same" if pair["same"] else "differs"
        differences = _differences(pair["metrics"]["a"], pair["metrics"]["b"])
        lines.append(f"{'  ' * pair['depth']}{name}: {state}" + (f" ({differences})" if differences else ""))
        changes = [hunk for hunk in pair["hunks"] if not hunk["equal"]]
        for hunk in changes[:CHANGES_PRINTED]:
            lines.append(f"{'  ' * pair['depth']}  at A {hunk['a_start'] + 1}, B {hunk['b_start'] + 1}:")
            lines += [f"{'  ' * pair['depth']}{_entry('A', e)}" for e in hunk["a"][:3]]
            lines += [f"{'  ' * pair['depth']}{_entry('B', e)}" for e in hunk["b"][:3]]
        if len(changes) > CHANGES_PRINTED:
            lines.append(f"{'  ' * pair['depth']}  ... and {len(changes) - CHANGES_PRINTED} more changes")
    return "\n".join(lines) + "\n"
