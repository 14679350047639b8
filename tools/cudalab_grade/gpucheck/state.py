"""tools/gpu-check's state file (<build-dir>/gpu-check/state.json): the last record of each
step, so that steps can run in separate invocations and the report covers them all."""
from __future__ import annotations

import json
from pathlib import Path

from .context import OK_STATUSES, STEPS

STATE_VERSION = 1


def new_state() -> dict:
    return {"version": STATE_VERSION, "steps": {}}


def merge_state(state: dict | None, record: dict) -> dict:
    """A copy of state with record as the record of its step (a rerun replaces it)."""
    merged = {"version": STATE_VERSION, "steps": {}}
    if state and isinstance(state.get("steps"), dict):
        merged["steps"].update(state["steps"])
    merged["steps"][record["step"]] = record
    merged["steps"] = {s: merged["steps"][s] for s in STEPS if s in merged["steps"]} | {
        s: r for s, r in merged["steps"].items() if s not in STEPS}
    return merged


def load_state(path: Path) -> dict:
    """The state file, or a new state when it is missing, unreadable or of another version."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return new_state()
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION or not isinstance(data.get("steps"), dict):
        return new_state()
    state = new_state()
    for record in data["steps"].values():
        if isinstance(record, dict) and record.get("step"):
            state = merge_state(state, record)
    return state


def step_ok(record: dict | None) -> bool:
    return bool(record) and record.get("status") in OK_STATUSES
