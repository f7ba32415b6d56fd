"""The morning report: what a night of sleep did, as facts (`morning --json`) and as
Markdown (morning.md), in the person's words: each lesson with the sessions it came from.

Pure but for `write_morning`, which writes through the own-folder writer.
"""
from . import files, paths
from .failures import error_line, telling_lines
from .forget import incident
from .redact import redact
from .shorten import clip
from .store import Store
from .wording import core_command

REPORT_ITEMS = 8             # lines per section of the morning report before "and N more"
SOURCES_SHOWN = 3            # sources shown under each lesson in the report



def morning_facts(store: Store, facts: dict) -> dict:
    """What the night did, in the words and order the report uses (also `morning --json`)."""
    cons, ver = facts["consolidation"], facts["verification"]
    ids = {i for ls in cons["new"] for i in ls["sources"]} | {i for ls in cons["strengthened"] for i in ls["sources"]}
    episodes = store.episodes_by_id(sorted(ids), ("id", "session_id", "kind", "at", "title", "facts"))  # what source() reads

    def sources(source_ids):
        return _by_session([episodes[i] for i in source_ids if i in episodes])

    report = {
        "night": facts["night"],
        "lessons_new": [dict(ls, sources=sources(ls["sources"])) for ls in cons["new"]],
        "lessons_strengthened": [dict(ls, sources=sources(ls["sources"])) for ls in cons["strengthened"]],
        "predictions_confirmed": ver["confirmed"],
        "predictions_failed": ver["failed"],
        "predictions_made": len(facts["prediction"]["made"]),
        "archived": {"episodes": facts["decay"]["archived"], "lessons": facts["decay"]["lessons_archived"]},
        "vetoed": facts.get("vetoed", []),
        "warnings": facts.get("warnings", []),
        "render": facts.get("render"),
    }
    if facts.get("errors"):
        report["errors"] = facts["errors"]
    return report


def _by_session(eps: list) -> list:
    """One line per session a lesson came from: the correction if there was one, else the error."""
    best: dict = {}
    for ep in eps:
        key = incident(ep)
        rank = {"correction": 0, "error": 1}.get(ep["kind"], 2)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, ep)
    failed = {(ep["session_id"], ep["facts"].get("command")) for ep in eps if ep["kind"] == "error"}
    out = []
    for _, ep in sorted(best.values(), key=lambda x: (x[1]["at"], x[1]["id"])):
        item = source(ep)
        if ep["kind"] == "correction" and (ep["session_id"], _about(ep["facts"])[0]) in failed \
                and not ep["facts"].get("rejected") and _about(ep["facts"])[0]:
            item["what"] += " failed"
        out.append(item)
    return out


def source(ep: dict) -> dict:
    """An episode in a few plain words: its date and what happened."""
    facts = ep.get("facts") or {}
    if ep["kind"] == "correction":
        said = clip((facts.get("said") or "").splitlines()[0] if facts.get("said") else "", 100)
        if facts.get("rejected"):
            command, tool = facts.get("command") or "", facts.get("tool")
        else:
            command, tool = _about(facts)
        if tool == "Bash":
            action = f"`{clip(core_command(command), 60)}`"
        elif tool in ("Edit", "MultiEdit", "Write", "NotebookEdit", "Read"):   # the file, not its path
            action = f"{tool} `{clip(command.split(' ', 1)[-1].rsplit('/', 1)[-1], 50)}`"
        else:
            action = clip(command, 60)
        if facts.get("rejected"):
            what = f"you refused {action}" + (f" and said \"{said}\"" if said else "")
        else:
            what = f"you said \"{said}\"" + (f" after {action}" if command else "")
    elif ep["kind"] == "error":
        command = facts.get("command") or facts.get("tool") or ""
        shown = f"`{clip(core_command(command), 60)}`" if facts.get("tool") == "Bash" else clip(command, 60)
        line = error_line(facts) or next(iter(telling_lines(facts)), "")
        what = f"{shown} failed" + (f": {clip(line, 90)}" if line else "")
    else:
        what = f"{ep['kind']}: {clip(ep.get('title') or '', 100)}"
    return {"id": ep["id"], "kind": ep["kind"], "at": ep["at"], "what": what}


def _about(facts: dict) -> tuple:
    """(command, tool) a correction was about: the call its words name (`trigger`); older
    episodes, stored before triggers, keep the last call."""
    if "trigger" in facts:
        return facts.get("trigger") or "", facts.get("trigger_tool") or ""
    return facts.get("command") or "", facts.get("tool") or ""


def eventful(report: dict) -> bool:
    """Whether the night changed anything (warnings alone, which render repeats, do not count)."""
    return any([report["lessons_new"], report["lessons_strengthened"], report["predictions_confirmed"],
                report["predictions_failed"], report["predictions_made"], report["archived"]["episodes"],
                report["archived"]["lessons"], report["vetoed"], report.get("errors")])


def merge_nights(earlier: dict, later: dict) -> dict:
    """One report for two sleeps of the same night: all either did, each thing once (the later
    version of it), counts summed; warnings, render and errors as the later run saw them."""
    def union(key, drop=()):
        by_id = {}
        for item in earlier.get(key, []) + later.get(key, []):
            by_id[item.get("id")] = item
        return [item for i, item in by_id.items() if i not in drop]

    new = union("lessons_new")
    episodes = dict(earlier["archived"]["episodes"])
    for kind, n in later["archived"]["episodes"].items():
        episodes[kind] = episodes.get(kind, 0) + n
    merged = dict(later, night=earlier["night"], runs=earlier.get("runs", 1) + 1, lessons_new=new,
                  lessons_strengthened=union("lessons_strengthened", drop={ls["id"] for ls in new}),
                  predictions_confirmed=union("predictions_confirmed"),
                  predictions_failed=union("predictions_failed"),
                  predictions_made=earlier["predictions_made"] + later["predictions_made"],
                  archived={"episodes": episodes,
                            "lessons": earlier["archived"]["lessons"] + later["archived"]["lessons"]},
                  vetoed=union("vetoed"))
    merged.pop("errors", None)
    if later.get("errors"):
        merged["errors"] = later["errors"]
    return merged


def summary(report: dict) -> str:
    """The night in one line."""
    archived = sum(report["archived"]["episodes"].values()) + len(report["archived"]["lessons"])
    parts = [_count(len(report["lessons_new"]), "new lesson"),
             f"{len(report['lessons_strengthened'])} strengthened",
             _count(len(report["predictions_confirmed"]), "prediction") + " confirmed",
             f"{len(report['predictions_failed'])} failed",
             _count(archived, "memory", "memories") + " archived"]
    if report["vetoed"]:
        parts.append(_count(len(report["vetoed"]), "lesson") + " vetoed")
    if report["warnings"]:
        parts.append(_count(len(report["warnings"]), "warning"))
    return ", ".join(parts)


def morning_text(report: dict, prediction_days: int, archive_after_days: int) -> str:
    """The morning report as Markdown: short enough to read over coffee.

    prediction_days and archive_after_days are sleep's numbers, said in the report's words."""
    when = report["night"][:16].replace("T", " ")
    runs = f" (in all, over {report['runs']} sleeps)" if report.get("runs", 1) > 1 else ""
    lines = [f"# openmemory: the night of {when} UTC", "",
             (summary(report) + runs + ".") if eventful(report) else "Nothing changed tonight.", ""]

    def section(title, items, render, after=()):
        if not items and not after:
            return
        lines.extend([f"## {title}", ""])
        for item in items[:REPORT_ITEMS]:
            lines.extend(render(item))
        if len(items) > REPORT_ITEMS:
            lines.append(f"- and {len(items) - REPORT_ITEMS} more")
        if after:
            lines.extend(([""] if items else []) + list(after))
        lines.append("")

    def sources(srcs):
        out = [f"  - {s['at'][:10]}: {s['what']}" for s in srcs[:SOURCES_SHOWN]]
        if len(srcs) > SOURCES_SHOWN:
            out.append(f"  - and {len(srcs) - SOURCES_SHOWN} more")
        return out

    def new(ls):
        return [f"- {ls['text']}", f"  ({ls['kind']}, {ls['cwd'] or 'every project'}; "
                f"seen in {_count(ls['seen'], 'session')})"] + sources(ls["sources"])

    def strengthened(ls):
        notes = "".join([f"; strength {ls['before']:.2f} → {ls['strength']:.2f}",
                         "; now applies in every project" if ls["everywhere"] else "",
                         "; back from the archive" if ls["revived"] else ""])
        return [f"- {ls['text']}", f"  (seen in {_count(ls['seen'], 'session')}{notes})"] + sources(ls["sources"])

    def prediction(item):
        outcome, p = item
        change = f"strength {p['before']:.2f} → {p['strength']:.2f}"
        if outcome == "confirmed":
            return [f"- Confirmed: {p['lesson']}",
                    f"  It came up again on {p['evidence']['at'][:10]}: {p['evidence']['what']} ({change})"]
        return [f"- Failed: {p['lesson']}",
                f"  It did not come up between {p['made'][:10]} and {p['deadline'][:10]} ({change})"]

    section("New lessons", report["lessons_new"], new)
    section("Strengthened", report["lessons_strengthened"], strengthened)
    made = report["predictions_made"]
    section("Predictions", [("confirmed", p) for p in report["predictions_confirmed"]]
            + [("failed", p) for p in report["predictions_failed"]], prediction,
            after=[f"{_count(made, 'new prediction')}: each says its lesson will come up again within "
                   f"{prediction_days} days."] if made else ())
    archived = report["archived"]
    memories = []
    if archived["episodes"]:
        kinds = ", ".join(_count(n, k) for k, n in sorted(archived["episodes"].items()))
        memories = [f"- {_count(sum(archived['episodes'].values()), 'memory', 'memories')} not used for "
                    f"{archive_after_days} days or more ({kinds}): archived, not deleted."]
    section("Archived", archived["lessons"], lambda ls: [f"- Lesson faded: {ls['text']}"], after=memories)
    section("Vetoed by you", report["vetoed"], lambda v: [
        f"- {v['text']}", "  (you deleted it from Claude Code's memory; it will not come back)"])
    section("The model", [report["model"]] if report.get("model") else [], _model_line)
    section("Warnings", report["warnings"], lambda w: [f"- {w}"])
    return "\n".join(lines).rstrip() + "\n"


def _model_line(m: dict) -> list:
    decided = m["doubtful"]["corrections"] + m["doubtful"]["not"]
    return [f"- {m['model']}: {_count(m['asked'], 'question')} ({m['cached']} answered from the cache), "
            f"{_count(m['answered'], 'new answer')}, {_count(m['failures'], 'failure')}; "
            f"{_count(decided, 'doubtful turn')} decided ({m['doubtful']['corrections']} corrections), "
            f"{_count(m['reworded'], 'lesson')} in its words, {_count(m['gists'], 'session gist')} led by it."]


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def write_morning(text: str) -> None:
    """Write the report atomically (a reader never sees half of it), private to the person."""
    data = redact(text).encode("utf-8")
    if files.read(paths.morning_path()) != data:
        files.write_own(paths.morning_path(), data)
