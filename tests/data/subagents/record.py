"""Record the subagent transcripts kept here, with the real Claude Code binary (2.1.328) and
the scripted fake model of ../shared/e2e: `python3 tests/data/subagents/record.py`.

Two sessions of one project: in each the main agent hands a build to a subagent (the Agent
tool), whose Bash call fails the same way. Kept as Claude Code wrote them, every line
verbatim, but for the lines of record types that carry no conversation and most of the bytes
(api-request*, tools-used, cost-state, atis-latch, and the prompt-snapshot and listing
attachments), which are dropped whole.
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parents[2].parent / "shared" / "e2e"
NOISE = {"api-request", "api-request-blob", "api-request-shape", "tools-used", "cost-state", "atis-latch"}
NOISY_ATTACHMENTS = {"prompt_snapshot", "skill_listing", "agent_listing_delta", "deferred_tools_delta"}
FAILING = "python3 -c \"import sys; sys.exit('ConfigError: BUILD_ENV is not set')\""
SCENARIO = {"steps": [
    {"match": "check the build", "reply": [{"text": "I will ask a helper."}, {"tool_use": {
        "name": "Agent", "input": {"description": "Run the build", "subagent_type": "general-purpose",
                                   "prompt": "SUBAGENT-TASK: run the build script and report"}}}]},
    {"match": "SUBAGENT-TASK", "reply": [{"tool_use": {"name": "Bash", "input": {
        "command": FAILING, "description": "run the build"}}}]},
    {"match": "BUILD_ENV is not set", "reply": [{"text": "SUBAGENT-REPORT: the build fails: BUILD_ENV is not set."}]},
    {"match": "SUBAGENT-REPORT", "reply": [{"text": "The helper says BUILD_ENV is not set."}]}],
    "default": "ok"}


def kept(line: str) -> bool:
    rec = json.loads(line)
    return rec.get("type") not in NOISE and not (
        rec.get("type") == "attachment" and (rec.get("attachment") or {}).get("type") in NOISY_ATTACHMENTS)


def main() -> int:
    sys.path.insert(0, str(HARNESS))
    import harness
    out = HERE / "projects"
    shutil.rmtree(out, ignore_errors=True)
    home = tempfile.mkdtemp(prefix="om-record-")
    try:
        for _ in range(2):
            r = harness.run_session(SCENARIO, ["please check the build"], home=home, allowed_tools="Bash,Agent")
            assert all(t["rc"] == 0 for t in r["turns"]), r["turns"]
        source = Path(harness.project_dir(home, os.path.join(home, "work")))
        for path in sorted(source.rglob("*")):
            target = out / "shop" / path.relative_to(source)      # the project's folder, named for good
            if path.is_dir() or path.parent.name == "tool-results":
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".jsonl":
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                target.write_text("".join(line for line in lines if kept(line)), encoding="utf-8")
            else:
                shutil.copyfile(path, target)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    for path in sorted(out.rglob("*")):
        if path.is_file():
            print(f"{path.stat().st_size:8d} {path.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
