"""Debate records written by hand for the dynamics tests, and run folders holding them."""

from __future__ import annotations

import json
from pathlib import Path

from madeval.records.folder import encode_line


def debate_record(turns, *, target="A", final=0.0, agents=3, neutral=(), config="c", task="t", item="i",
                  repeat=0, metrics=None):
    """A record as madeval stores it; ``turns`` lists each turn's messages as (agent, answer)."""
    messages = []
    for number, spoken in enumerate(turns, 1):
        for agent, answer in spoken:
            messages.append({"id": len(messages), "turn": number, "step": 0, "agent": agent, "stage": "improve",
                             "text": f"Final Solution: {answer}", "solution": answer, "answer": answer,
                             "agreement": None})
    return {
        "unit": {"key": f"{config}|{task}|{item}|{repeat}", "config": config, "task": task, "item": item,
                 "repeat": repeat},
        "config_label": config, "target": target, "prediction": None, "parse_failure": False,
        "metrics": metrics if metrics is not None else {"accuracy": final}, "decision_success": True,
        "turns": len(turns), "calls": len(messages), "chain": len(turns),
        "tokens": {"prompt": 0, "completion": 0, "total": 0}, "wall_s": 0.0, "llm_s": 0.0, "oracle": False,
        "transcript": {
            "agents": [{"index": i, "persona": {"name": f"P{i}"}, "model": "m", "endpoint": "e",
                        "neutral": i in neutral} for i in range(agents)],
            "messages": messages, "calls": [], "events": [], "decision": None, "turns_used": len(turns),
            "oracle": False,
        },
    }


def write_run(folder: Path, configurations: dict[str, str], records: list[dict]) -> Path:
    """A run folder: ``run.json`` naming ``configurations`` (id -> label) and the records' tasks."""
    folder.mkdir(parents=True)
    tasks = list(dict.fromkeys(r["unit"]["task"] for r in records))
    run = {"configurations": {cid: {"label": label} for cid, label in configurations.items()},
           "tasks": {task: {"items": sorted({r["unit"]["item"] for r in records if r["unit"]["task"] == task})}
                     for task in tasks},
           "order": {"configurations": list(configurations), "tasks": tasks}, "fingerprint": folder.name}
    (folder / "run.json").write_text(json.dumps(run))
    (folder / "records.jsonl").write_bytes(b"".join(encode_line(r) for r in records))
    return folder
