"""The `openmemory` command: one verb per stage, data on stdout, messages on stderr."""
import argparse
import atexit
import gc
import json
import logging
import os
import re
import shlex
import signal
import sqlite3
import sys
import time
import traceback

from . import __version__, clock, errors, paths, store
from .errors import OpenMemoryError
from .shorten import HIDDEN, clip, wellformed
from .redact import redact


def cmd_paths(args) -> int:
    """Print every location openmemory uses (each overridable by an environment variable)."""
    where = paths.all_paths()
    if args.json:
        _print_json(where)
    else:
        width = max(map(len, where))
        for name, value in where.items():
            print(f"{name:<{width}}  {value}")
    return 0


def cmd_ingest(args) -> int:
    """Read new and changed sessions of Claude Code, Codex CLI and Gemini CLI into episodes."""
    from . import ingest  # each verb imports its stage: `recall` must start fast
    roots = args.paths or None
    now = _time_arg(args.now, "--now")     # a time that is none is a usage error, sessions or not
    if roots is None and not any(root.is_dir() for root in ingest.default_roots()):
        if not args.quiet:
            print(f"no sessions at {paths.projects_dir()}, {paths.codex_sessions_dir()}, "
                  f"{paths.codex_archived_dir()} or "
                  f"{paths.gemini_chats_root()} (nothing to ingest)", file=sys.stderr)
            if args.json:
                _print_json(ingest.Report().as_dict())  # --json always prints one object
        return 0
    show = not args.quiet and sys.stderr.isatty()

    def progress(n, total, path):
        print(f"\r\033[Kingesting {n}/{total} {shown(os.path.basename(path)[:50])}", end="",
              file=_unescaped(sys.stderr), flush=True)

    with store.connect() as db:
        report = ingest.ingest(db, roots, progress=progress if show else None, force=args.force,
                               now=now)
        if show:
            print("\r\033[K", end="", file=_unescaped(sys.stderr), flush=True)
        asked = _model_after_ingest(db, args.quiet) if args.model else None
    if args.quiet:
        return 0
    for root in roots or ():    # a folder named that holds none where ingest looks: said, not a silent 0 of 0
        if os.path.isdir(os.path.expanduser(root)) and not ingest.discover([root]):
            print(f"openmemory: warning: no transcript in {shown(root)}: ingest reads a transcript file, a folder "
                  f"of them (one project's) or a folder of such folders (Claude Code's projects/), and Codex's "
                  f"sessions/ or Gemini's tmp/; name the folder that holds them", file=sys.stderr)
    if args.json:
        _print_json(dict(report.as_dict(), **({"model": asked} if args.model else {})))
    else:
        print(report.line())
        if asked:
            judged = asked["judged"]
            print(f"model: {_count(asked['gists'], 'session gist')} led by it, "
                  f"{_count(judged['asked'], 'message')} judged ({_count(judged['corrections'], 'correction')}, "
                  f"{judged['lasting']} lasting; {_count(asked['asked'], 'question')}, {asked['cached']} from the "
                  f"cache, {_count(asked['failures'], 'failure')}"
                  + (f", {_count(judged['unusable'], 'answer')} not used: not the form asked for, the log has each"
                     if judged.get("unusable") else "")
                  + (f", {judged['live']} about a session still in progress wait for the next night"
                     if judged.get("live") else "") + ")")
        for path, reason in report.failed:
            print(f"openmemory: warning: cannot read {path}: {reason}", file=sys.stderr)
        for path in report.not_transcripts:
            print(f"openmemory: warning: skipped {path}: not a {ingest.log_kind(path)} (no record of a known "
                  f"type in its first lines); it is not read again until it changes", file=sys.stderr)
    return 0


def _model_after_ingest(db, quiet: bool) -> dict | None:
    """`ingest --model`: the judge reads the new messages, the model leads session gists (never the hook's ingest)."""
    from . import judge, llm, review
    from .clock import iso
    model = _open_model(db, iso())
    if model is None:
        if not quiet:
            print(f"openmemory: warning: --model: {llm.problem() or _NO_MODEL}; ingested without one",
                  file=sys.stderr)
        return None
    now = iso()
    judged = judge.judge_messages(db, model, now, share=1.0)
    review.settle(db, judged["lessons"], now)
    gists = llm.write_gists(db, model)
    return dict(llm.close_model(db, model), judged=judged, gists=gists)


_NO_MODEL = ("no model turned on (`openmemory setup --judge claude|endpoint`, or OPENMEMORY_LLM_URL and "
             "OPENMEMORY_LLM_MODEL; see OPERATIONS.md)")


def _open_model(db, now):
    """Tonight's model, its failures logged to the log file (the CLI prints only its own lines)."""
    from . import llm
    if llm.config() is not None or llm.problem():
        _log_to_file()
    return llm.open_model(db, now)


def _count(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"


def _reading():
    """The database opened for a verb that only reads (recall, show, status, lessons, backup): one
    this process cannot write (read-only file, folder or disk) is read as it is, said in one note."""
    db = store.connect(read_only_ok=True)
    if db.read_only:
        print(f"openmemory: note: read only, nothing written: {db.read_only}", file=sys.stderr)
    return db


def cmd_status(args) -> int:
    """Show what memory holds: episodes by kind, sessions, lessons, predictions, size; check the file."""
    with _reading() as db:
        problem = db.quick_check()
        if problem:
            raise errors.damaged(db.path, problem)
        counts = db.counts()
        model = _model_facts(db)
    counts["check"] = "ok"
    if args.json:
        _print_json(dict(counts, model=model))
        return 0
    e = counts["episodes"]
    print(f"episodes     {e['total']} ({_count(e['session'], 'session episode')}, {_count(e['error'], 'error')}, "
          f"{_count(e['correction'], 'correction')}, {_count(e['note'], 'note')}; {e['archived']} archived)")
    print(f"passages     {counts['passages']['total']} (what was said; {counts['passages']['archived']} archived)")
    print(f"transcripts  {counts['sessions']} ingested, {_count(counts['lines_skipped'], 'malformed line')} skipped"
          + (f", {counts['opted_out']} kept out (.openmemory-ignore or the ignore list)" if counts["opted_out"] else ""))
    others = "".join(f", {counts['lessons_' + state]} {state}" for state in ("archived", "vetoed")
                     if counts["lessons_" + state])
    print(f"lessons      {counts['lessons']} ({counts['lessons_live']} live, "
          f"{_count(counts['lessons_candidate'], 'candidate')} to review{others}: `openmemory lessons`)")
    print(f"predictions  {counts['predictions']} ({counts['predictions_open']} open, "
          f"{counts['predictions_confirmed']} confirmed, {counts['predictions_failed']} failed"
          + (f", {counts['predictions_untested']} untested" if counts["predictions_untested"] else "") + ")")
    print(f"database     {counts['db']} ({_size(counts['db_bytes'])}; passes quick_check)")
    print(f"last ingest  {counts['last_ingest'] or 'never'}")
    print(f"last sleep   {counts['last_sleep'] or 'never'}")
    print(f"model        {_model_status(model)}")
    return 0


def _model_status(model: dict) -> str:
    if not model["configured"]:
        return f"not used: {model['problem']}" if model["problem"] else "none (optional; see OPERATIONS.md)"
    answered = f"last answered {model['last_answered']}" if model["last_answered"] else "never answered yet"
    night = model["last_night"] or {}
    used = ""
    if night.get("calls") is not None and night.get("cap"):
        used = (f"; last run: {_count(night['calls'], 'call')}, {night.get('tokens', 0):,} tokens"
                + (f" (${night['cost_usd']:.2f})" if night.get("cost_usd") else "")
                + f" of {night['cap']['calls']} calls and {night['cap']['tokens']:,} tokens a night")
    return f"{model['describe']}; {answered}{used}"


def _model_facts(db) -> dict:
    """Whether a model is turned on (an endpoint, or Claude Code headless), whether and when it last
    answered, and what its last run used (never its key)."""
    from . import llm
    cfg = llm.config()
    return {"configured": cfg is not None, "backend": cfg.backend if cfg else None,
            "model": cfg.model if cfg else None, "url": (cfg.url or None) if cfg else None,
            "describe": cfg.describe() if cfg else None, "problem": llm.problem(),
            "last_answered": db.get_state("model_answered"),
            "last_night": json.loads(db.get_state("model_night") or "null")}


def cmd_backup(args) -> int:
    """Copy the memory database to PATH, safely while the server, a hook or cron use it."""
    with _reading() as db:
        problem = db.quick_check()
        if problem:
            raise errors.damaged(db.path, problem)
        db.backup(args.path)
    print(f"backed up {paths.db_path()} to {args.path}", file=sys.stderr)
    return 0


def cmd_forget(args) -> int:
    """Forget memories for good (episodes, passages, lessons, sessions): database, text index, the agents' memory files, reports."""
    from . import forget, render, review, sleep
    episode_ids, lesson_ids, passage_ids = forget.parse_ids(args.ids)
    project = os.path.realpath(os.path.expanduser(args.project)) if args.project else None
    if not (episode_ids or lesson_ids or passage_ids or args.query or project or args.session is not None):
        raise errors.UsageError("say what to forget: ids as recall shows them (e12, p45, l3), --query Q, "
                              "--project PATH or --session ID")
    named = set(episode_ids)        # the episodes named by id (a query, project or session finds the rest)
    with store.connect() as db:
        if args.query:
            found_e, found_l, found_p = forget.matching(db, args.query)
            episode_ids += found_e
            lesson_ids += found_l
            passage_ids += found_p
        session = forget.find_session(db, args.session) if args.session is not None else None
        plan = forget.plan(db, episode_ids, lesson_ids, project, passage_ids, forget.query_words(args.query or ""),
                           session)
        stopped = forget.unfinished(db)  # the last forget was stopped before its files were rewritten
        if not (plan.episodes or plan.lessons or plan.sessions or plan.passages or plan.kept_out):
            if not stopped:
                already = ([f"e{i}" for i in plan.finished[0]] + [f"l{i}" for i in plan.finished[1]]
                           + [f"p{i}" for i in plan.finished[2]] + ([f"session {session}"] if session else []))
                where = "" if not project else f" under {paths.one_line(project)}" + (
                    "" if os.path.exists(project) else " (no such folder here now: a path is read from where you are)")
                print(f"already forgotten: {', '.join(already)}" if already else f"nothing in memory to forget{where}",
                      file=sys.stderr)
                if project and plan.elsewhere:
                    _tell_kept(project, plan.elsewhere)
                return 0
            done = None
        else:
            if session:
                row = db.session(session) or {}
                print(f"session {session} · {(row.get('started') or '')[:10] or 'no date'} · "
                      f"{paths.one_line(row['cwd']) if row.get('cwd') else 'no folder'}"
                      f" · {len(plan.episodes)} episode(s), {len(plan.passages)} passage(s)"
                      + ("; what it says later is kept out too" if plan.kept_out or session in forget.ignored_sessions()
                         else ""))
            for ep in plan.episodes:
                print(f"episode e{ep['id']} · {ep['kind']} · {ep['at'][:10]} · {clip(ep['title'], 90)}"
                      + (f" · {_held(ep, plan.held)}" if ep["id"] in plan.held else ""))
            for ps in plan.passages[:PASSAGES_LISTED]:
                print(f"passage p{ps['id']} · {ps['kind']} · {ps['at'][:10]} · {clip(ps['text'], 90)}")
            if len(plan.passages) > PASSAGES_LISTED:
                print(f"and {len(plan.passages) - PASSAGES_LISTED} more passages")
            for ls in plan.lessons:
                print(f"lesson l{ls['id']} · {clip(ls['text'], 100)}")
            for ls, text, _ in plan.reworded:
                again = "your text, kept" if (ls.get("backing") or {}).get("edited") else "worded again"
                print(f"lesson l{ls['id']} · {again}: {clip(text, 100)}")
            for lesson_id, folder in sorted(plan.moved.items()):
                print(f"lesson l{lesson_id} · kept: also learnt in {paths.one_line(folder)}, filed under it from now on")
            if project:
                _tell_kept(project, plan.elsewhere)
            sys.stdout.flush()
            if (args.query or project or session) and not args.yes:
                if not sys.stdin.isatty():
                    raise OpenMemoryError("forget --query, --project and --session ask first; add --yes to forget "
                                          "without asking")
                print("forget these for good? [y/N] ", end="", file=sys.stderr, flush=True)
                if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                    print("nothing forgotten", file=sys.stderr)
                    return 1
            # Vetoes first, tombstones and the database next, files last: stopped anywhere, the
            # same forget run again finishes what is left (forget.unfinished), files included.
            render.veto_forgotten([ls["text"] for ls in plan.lessons if ls["text"]], plan.quotes, clock.iso(),
                                  [(ls, text) for ls, text, _ in plan.reworded])
            done = forget.apply(db, plan, clock.iso())
        # What backed the lessons worded again may be gone: settled here, and on the re-run of
        # a forget stopped before it, every lesson (which it worded again is not recorded).
        review.settle(db, None if stopped else [ls["id"] for ls, _, _ in plan.reworded])
        rendered = render.render(db)
        sleep.told_gone(db, rendered["gone"])   # a folder no longer here whose lessons it forgot
        report = db.get_state("morning")
        if report and (done is None or done["morning"]):
            sleep.write_morning(sleep.morning_text(json.loads(report), sleep.PREDICTION_DAYS,
                                                   sleep.ARCHIVE_AFTER_DAYS))
        emptied, compacted = forget.finished(db)
        same = _same_failures_kept(db, plan.episodes, named) if done is not None else []
    files_done = len(rendered["written"]) + len(rendered["removed"])
    if done is None:
        print(f"finished a forget that was stopped before its files were rewritten; {files_done} file(s) "
              f"rewritten", file=sys.stderr)
    else:
        if stopped:
            print("also finished a forget that was stopped before its files were rewritten", file=sys.stderr)
        kept = sum(1 for ls, _, _ in plan.reworded if (ls.get("backing") or {}).get("edited"))   # listed so
        print(f"forgot {done['episodes']} episode(s), {done['passages']} passage(s) and {done['lessons']} lesson(s); "
              f"{done['reworded'] - kept} lesson(s) worded again"
              + (f", {kept} kept in your own words" if kept else "")
              + f", {done['scrubbed']} memory(ies) cleaned of their words"
              + (f", {done['emptied']} left with no words of their own taken out too" if done.get("emptied") else "")
              + f"; {files_done} file(s) rewritten",
              file=sys.stderr)
        for ep in plan.episodes:
            if ep["id"] in plan.held and ep["id"] not in named:
                print(f"e{ep['id']} went with p{plan.held[ep['id']]}: {_held(ep, plan.held)} (a forget takes every "
                      f"memory of the words it forgets, so they do not stay in memory through another)",
                      file=sys.stderr)
        for sid in plan.kept_out:
            print(f"session {sid} is kept out of memory from now on (its line in {paths.ignore_list_path()}: "
                  f"delete it to let what the session says later in)", file=sys.stderr)
        for title, ids in same:
            shown = " ".join(f"e{i}" for i in ids)
            print(f"openmemory: note: {_count(len(ids), 'other failure')} with the same cause as {clip(title, 80)} "
                  f"{'stays' if len(ids) == 1 else 'stay'} in memory; to forget {'it' if len(ids) == 1 else 'them'} "
                  f"too: openmemory forget {shown}", file=sys.stderr)
    if not compacted:
        print(f"openmemory: warning: {paths.db_path()} could not be compacted (see the log: no room on the disk "
              f"for a copy, or another writer), so its free space may still hold forgotten bytes; run the same "
              f"forget again later", file=sys.stderr)
    if not emptied:
        print("openmemory: warning: another process is reading the database, so its log (memory.db-wal) may "
              "still hold the forgotten bytes until it ends; run `openmemory status` later", file=sys.stderr)
    return 0


def cmd_lessons(args) -> int:
    """List every lesson and candidate with what backs it and where it came from; approve, reject or edit one."""
    from . import render, review
    if args.undo_veto and args.action not in ("approve", "edit"):
        raise errors.UsageError("--undo-veto goes with approve or edit: openmemory lessons approve lesson:N --undo-veto")
    with (_reading() if args.action == "list" else store.connect()) as db:
        if args.action == "list":
            if args.args:
                raise errors.UsageError("`openmemory lessons` lists them all; to act on one: "
                                      "openmemory lessons approve|reject lesson:N, or edit lesson:N \"text\"")
            entries = review.listing(db)
            if args.json:
                _print_json(entries)
            elif not entries:
                print("no lessons yet: sleep makes them from your corrections and repeated failures", file=sys.stderr)
            else:
                print("\n\n".join("\n".join(review.told(e)) for e in entries))
            return 0
        if args.action == "move":
            return _move(db, args)
        if args.action in ("approve", "edit"):   # a lesson file deleted since the last render is a veto
            _tell_morning(db, render.render(db)["vetoed"], "deleted")   # made before: taken back by name only
        if args.action == "edit":
            if len(args.args) < 2:
                raise errors.UsageError("edit takes a lesson and its new text: openmemory lessons edit lesson:N \"text\"")
            lessons = [review.edit(db, review.parse_id(args.args[0]), " ".join(args.args[1:]),
                                   undo_veto=args.undo_veto)]
        else:
            if not args.args:
                raise errors.UsageError(f"say which: openmemory lessons {args.action} lesson:N")
            ids = dict.fromkeys(map(review.parse_id, args.args))
            lessons = [review.approve(db, i, undo_veto=args.undo_veto) for i in ids] if args.action == "approve" \
                else [review.reject(db, i) for i in ids]
        rendered = render.render(db)
        vetoed = [{"id": ls["id"], "text": ls["text"]} for ls in lessons if ls["vetoed"]] if args.action == "reject" \
            else []
        _tell_morning(db, vetoed, "rejected")
        _tell_morning(db, rendered["vetoed"], "deleted", rendered)
        if args.action in ("approve", "edit"):
            from . import sleep
            sleep.told_approved(db, [{"id": ls["id"], "text": ls["text"]} for ls in lessons if not ls["vetoed"]],
                                "edited" if args.action == "edit" else "approved")
    if args.action == "edit":
        _tell_cut(lessons[0])
    if args.json:
        _print_json({"lessons": [{"id": ls["id"], "state": review.state_name(ls), "text": ls["text"]}
                                 for ls in lessons], "render": render.summary(rendered)})
        return 0
    for ls in lessons:
        print(review.brief(ls))
    print(render.summary(rendered), file=sys.stderr)
    return 0


def _move(db, args) -> int:
    """`lessons move OLD NEW`: the project folder OLD was moved or renamed to NEW (the person says
    so; nothing in a repository's files does): what is filed under OLD (lessons, sessions, passages)
    is filed under NEW from now on (store.move_project; a transcript read there later, paths.moved_to),
    and its lessons are rendered into NEW's memory. A folder made again at OLD is a project of its own."""
    from . import render
    if len(args.args) != 2:
        raise errors.UsageError("move takes the folder the project was in and the folder it is in now: "
                                "openmemory lessons move OLD NEW")
    old = os.path.normpath(os.path.abspath(os.path.expanduser(args.args[0])))
    new = os.path.realpath(os.path.expanduser(args.args[1]))
    if not os.path.isdir(new):
        raise errors.UsageError(f"{paths.one_line(new)} is no folder here: NEW is the folder the project is in now")
    if os.path.lexists(old):
        raise errors.UsageError(f"{paths.one_line(old)} is still here: a move files under NEW what is filed under "
                                f"a folder that is no longer there (move or rename the folder first)")

    def under(cwd) -> bool:
        root = paths.project_of(cwd) if cwd and paths.is_absolute(cwd) else None
        return bool(root) and (root == old or root.startswith(old.rstrip("/") + "/"))
    lessons = [l for l in db.all_lessons() if not l["archived"] and not l["vetoed"] and under(l["cwd"])]
    sessions = [c for c in db.session_cwds() if under(c)]
    if not lessons and not sessions:
        raise errors.UsageError(f"nothing in memory is filed under {paths.one_line(old)}: a path is read from where "
                                f"you are (`openmemory lessons` names each lesson's project)")
    db.move_project(old, new, clock.iso())
    paths.moved(db.project_moves())
    paths.seen_in(db.folders_seen_in())     # a removed worktree of OLD's: NEW's now
    rendered = render.render(db)
    _tell_morning(db, rendered["vetoed"], "deleted", rendered)
    n = len(lessons)
    what = f"{n} lesson{'' if n == 1 else 's'}, and the sessions read there," if n else "the sessions read there"
    print(f"moved: {what} filed under {paths.one_line(old)} are now {paths.one_line(paths.project_of(new))}'s project "
          f"(its memory folder {paths.one_line(paths.memory_dir_for(new))})")
    print(render.summary(rendered), file=sys.stderr)
    return 0


def _tell_cut(lesson: dict) -> None:
    """One note when an edited lesson is longer than its MEMORY.md line holds: the line, which
    loads at every session start, is cut there; the whole text is in its om-<id>.md."""
    from . import render
    cut = render.index_cut(lesson)
    if cut is not None:
        print(f"openmemory: note: MEMORY.md's line holds {len(cut)} of this lesson's {len(lesson['text'])} "
              f"characters (\"{cut} …\"); the whole text is in {render.file_name(lesson)}, which the agent "
              f"reads when the line leads it there", file=sys.stderr)


def _held(ep: dict, held: dict) -> str:
    """Why a correction goes with a passage forgotten: the person's message is the passage's words."""
    return f"the person's message it holds is in p{held[ep['id']]} word for word"


def _same_failures_kept(db, forgotten: list, named: set) -> list:
    """[(title, ids)]: for each failure forgotten by id (named), the failures with the same cause
    key and command that stay (another session's same failure); forget never takes them unasked."""
    gone, out, seen = {ep["id"] for ep in forgotten}, [], set()
    for ep in forgotten:
        facts = ep.get("facts") or {}
        if ep.get("kind") != "error" or ep["id"] not in named or (facts.get("cause"), facts.get("command")) in seen:
            continue
        seen.add((facts.get("cause"), facts.get("command")))
        ids = [i for i in db.same_failures(facts) if i not in gone]
        if ids:
            out.append((ep["title"], ids))
    return out


PASSAGES_LISTED = 20     # a forget lists at most this many of the passages it takes


def _tell_kept(folder: str, elsewhere: list) -> None:
    """forget --project: what it does not forget, said before it asks: the memories of the same
    project stored outside the folder (another clone of the repository, the rest of the repository
    a subfolder is in), with the forget that takes them too; and that later sessions come in."""
    from . import forget
    for root, episodes, passages in elsewhere:
        what = "the rest of its repository" if folder.startswith(root.rstrip("/") + "/") else \
            "another clone or worktree of its repository"
        print(f"not forgotten: {episodes} episode(s) and {passages} passage(s) of {paths.one_line(root)}, {what}; "
              f"`openmemory forget --project {shlex.quote(root)}` forgets those too")
    if not forget.OptOut().reason(folder):   # a folder not on this machine (copied transcripts): the list
        how = (f"put an empty {forget.IGNORE_MARKER} file in it" if os.path.isdir(folder)
               else f"add it as a line of {paths.one_line(paths.ignore_list_path())}")
        print(f"not kept out: sessions in {paths.one_line(folder)} from now on are stored as before; to keep it "
              f"out, {how}")


def _tell_morning(db, vetoed: list, how: str, rendered: dict | None = None) -> None:
    """The last morning report no longer lists what the person vetoed since as new (sleep.told_vetoed),
    nor, after a render, a folder no longer here whose lessons were moved or forgotten (sleep.told_gone)."""
    from . import sleep
    if vetoed:
        sleep.told_vetoed(db, vetoed, how)
    if rendered is not None:
        sleep.told_gone(db, rendered.get("gone") or {})


def cmd_render(args) -> int:
    """Write lessons where the agents load them (MEMORY.md, om-<id>.md, AGENTS.md, GEMINI.md) and lessons.jsonl."""
    from . import render
    with store.connect() as db:
        result = render.render(db, max_lines=args.max_lines)
        _tell_morning(db, result["vetoed"], "deleted", result)
    if args.json:
        _print_json(result)
    else:
        print(render.summary(result))
        for vetoed in result["vetoed"]:
            print(f"vetoed lesson {vetoed['id']} (you deleted its file): {vetoed['text']}")
        for warning in result["warnings"]:
            print(f"openmemory: warning: {warning}", file=sys.stderr)
    for error in result["errors"]:
        print(f"openmemory: error: {error}", file=sys.stderr)
    return 1 if result["errors"] else 0


def cmd_serve(args) -> int:
    """Run the MCP server Claude Code launches: JSON-RPC over stdin and stdout."""
    from . import mcp
    _log_to_file()
    if sys.stdin.isatty():    # typed by a person, who would otherwise see it wait in silence
        print("openmemory serve: the MCP server Claude Code starts; it reads JSON-RPC messages on stdin "
              "(Ctrl-D ends it). `openmemory doctor` starts it and checks that it answers.", file=sys.stderr)
    protocol = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never reach the protocol stream
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop_serving)
    mcp.serve(sys.stdin.buffer, protocol, project_dir=os.environ.get("CLAUDE_PROJECT_DIR") or None)
    return 0


def _stop_serving(signum, frame) -> None:
    # Claude Code stops its servers with SIGINT and sends SIGTERM ~100 ms later: exit at once.
    # Safe: every reply is flushed as it is written and SQLite rolls back an unfinished write.
    logging.getLogger("openmemory.mcp").info("stopped by signal %d", signum)
    os._exit(0)


def cmd_hook(args) -> int:
    """Serve Claude Code's hooks: SessionEnd and PreCompact ingest, SessionStart catches up sleep; prints nothing, exits 0."""
    from . import hook
    sys.stdout = sys.stderr  # a SessionStart hook's stdout would reach the model
    try:
        _log_to_file()
        hook.run(hook.read_event(sys.stdin), detach=args.detach)
    except (OpenMemoryError, sqlite3.DatabaseError, OSError) as e:  # said in one line, as the CLI would
        logging.getLogger("openmemory.hook").error("hook failed: %s", _one_line(e))
    except BaseException:  # exit 2 would mean "block" to Claude Code: never fail
        logging.getLogger("openmemory.hook").exception("hook failed")
    return 0


def _one_line(e: Exception) -> str:
    """An error in the CLI's one line (a bug: its type and words)."""
    if isinstance(e, sqlite3.Error):
        return store.explained(e, paths.db_path())
    if isinstance(e, OSError):
        return errors.os_fault(e)
    return str(e) if isinstance(e, OpenMemoryError) else f"{type(e).__name__}: {e}"


def cmd_sleep(args) -> int:
    """Consolidate memory for the night: decay, lessons, verification, predictions; write the morning report."""
    now = _time_arg(args.now, "--now")
    if args.catch_up:
        # Started detached by a session start's hook, its output going nowhere: what it did (or
        # why it failed) is said in the log, as the hook's own lines are.
        _log_to_file()
        try:
            return _sleep(args, now)
        except Exception as e:
            logging.getLogger("openmemory.sleep").error("catch-up sleep failed: %s", _one_line(e))
            raise
    return _sleep(args, now)


def _sleep(args, now) -> int:
    from . import ingest, llm, render, schedule, sleep
    from .clock import iso
    said = logging.getLogger("openmemory.sleep").info
    with schedule.sleep_lock(wait=not args.catch_up) as held:
        if not held:
            said("catch-up sleep: another sleep is running; nothing done")
            return 0  # --catch-up: another sleep is running
        with store.connect(busy_ms=max(store.busy_timeout_ms(), sleep.WRITE_PATIENCE_MS)) as db:
            if args.catch_up:
                if not schedule.sleep_due(db.get_state("last_sleep")):
                    said("catch-up sleep: the last sleep is not a day old; nothing done")
                    return 0
                if any(root.is_dir() for root in ingest.default_roots()):
                    ingest.ingest(db)  # as the nightly job does: sessions whose hook never ran, Codex's, Gemini's
                if not db.new_since_last_night():
                    said("catch-up sleep: no error or correction since the last night; no night")
                    return 0  # a catch-up over nothing is no night: the last sleep stays as it was
            model = None if args.no_model else _open_model(db, iso())
            report = sleep.night(db, now, render=render.render, model=model)
            llm.close_model(db, model)
    if args.catch_up:
        said(f"catch-up sleep: {sleep.summary(report)}; report in {paths.morning_path()}")
        for error in report.get("errors", []):
            logging.getLogger("openmemory.sleep").error("catch-up sleep: %s", error)
    if args.json:
        _print_json(report)
    elif not args.catch_up:
        tonight = f"; tonight in all: {sleep.summary(report['tonight'])}" if report.get("tonight") else ""
        print(f"{sleep.summary(report)}{tonight}; report in {paths.morning_path()}")
    for error in report.get("errors", []):
        print(f"openmemory: error: {error}", file=sys.stderr)
    return 1 if report.get("errors") else 0


def cmd_setup(args) -> int:
    """Connect Claude Code in one step: the MCP server, the hooks and the nightly sleep; Codex's and Gemini's
    server too (--undo removes them); --judge turns the optional judge on or off."""
    from . import setup
    if args.purge and not args.undo:
        raise errors.UsageError("--purge goes with --undo: `openmemory setup --undo --purge`")
    if args.judge is not None or _asks_for_a_judge(args):
        _setup_judge(args)
    changes = setup.undo_plan(purge=args.purge) if args.undo else setup.plan(args.schedule)
    todo = [c for c in changes if c.run is not None]
    if args.json and (args.dry_run or not todo):
        _print_json({"changes": [c.as_dict() for c in changes], "done": False})
        return 0
    if not args.json:
        for change in changes:
            print(f"{_MARK[change.action]} {change.text}")
    if not todo:
        if not args.json:
            print("nothing to change" if not args.undo else "nothing to remove")
        return 0
    if args.dry_run:
        print(f"dry run: {len(todo)} change{'s' if len(todo) != 1 else ''} not made")
        return 0
    if not args.yes and not _confirm("remove these?" if args.undo else "make these changes?"):
        print("nothing changed", file=sys.stderr)
        return 1
    notes = setup.undo(changes) if args.undo else setup.apply(changes)
    if args.json:
        _print_json({"changes": [c.as_dict() for c in changes], "done": True, "notes": notes})
        return 0
    for note in notes:
        print(note, file=sys.stderr)
    print(f"done; {SETUP_DONE}" if not args.undo else "done: removed what setup had added")
    return 0


# setup reads no session: the history already on disk waits for an ingest (README's quick start)
SETUP_DONE = "`openmemory ingest` reads the sessions you already have, `openmemory doctor` checks it"


def _asks_for_a_judge(args) -> bool:
    """Whether setup asks about the judge: only at a terminal, never with --yes (which alone never
    turns one on), --undo, --dry-run or --json."""
    return not (args.yes or args.undo or args.dry_run or args.json) and sys.stdin.isatty()


def _setup_judge(args) -> None:
    """The judge's part of setup: what it is and costs, said before it is turned on; the choice kept in
    openmemory's settings file, which the nightly job reads. Turning one on is always asked for by
    name (--judge, or the answer typed here)."""
    from . import settings
    current = settings.judge()
    if args.judge is not None:      # named on the command line: what cannot run is said alone, first
        try:
            settings.choose(args.judge, model=args.judge_model, url=args.judge_url, command=args.judge_command,
                            calls=args.judge_calls, tokens=args.judge_tokens, current=current)
        except ValueError as e:
            raise (errors.UsageError if isinstance(e, settings.NotAsTyped) else OpenMemoryError)(
                f"setup --judge {args.judge}: {e}") from None
    for line in settings.explain(current):
        print(line, file=sys.stderr)
    backend = args.judge
    if backend is None:
        print(f"turn on a judge? [off/claude/endpoint] (Enter keeps: {current.backend}) ", end="",
              file=sys.stderr, flush=True)
        backend = sys.stdin.readline().strip().lower() or current.backend
        backend = "off" if backend in ("n", "no", "none") else backend   # the question reads as yes or no
        if backend in ("y", "yes"):         # yes, but which: asked once more, by name
            backend = _ask("which judge? [claude/endpoint] ").lower() or current.backend
        if backend not in settings.BACKENDS:    # a slip of the keyboard costs the judge's choice, not the setup
            print(f"judge: {current.describe()}, as it was: no judge called {backend!r}; the choices are "
                  f"{', '.join(settings.BACKENDS)} (`openmemory setup --judge claude|endpoint` turns one on later)",
                  file=sys.stderr)
            return
    url, model = args.judge_url, args.judge_model
    if args.judge is None and backend == "endpoint" and not (current.backend == "endpoint" and current.url):
        url = url or _ask("its URL, OpenAI-compatible (such as http://localhost:11434/v1): ")   # chosen here:
        model = model or _ask("its model (such as qwen2.5:7b): ")                               # asked here too
    try:
        choice = settings.choose(backend, model=model, url=url, command=args.judge_command,
                                 calls=args.judge_calls, tokens=args.judge_tokens, current=current)
    except ValueError as e:
        if args.judge is not None:      # named on the command line: a value missing there is a usage error
            raise (errors.UsageError if isinstance(e, settings.NotAsTyped) else OpenMemoryError)(
                f"setup --judge {backend}: {e}") from None
        # an answer typed here that cannot run: the judge stays as it was, and the rest of setup goes on
        print(f"judge: {current.describe()}, as it was: {backend}: {e} (`openmemory setup --judge {backend} ...` "
              f"turns it on later)", file=sys.stderr)
        return
    if choice.backend != "off":
        for line in settings.cost(choice):
            print(line, file=sys.stderr)
    if args.dry_run:
        print(f"dry run: the judge would be {choice.describe()}")
        return
    if args.judge is None and choice == current:    # the answer kept it: nothing to write, nothing changed
        print(f"judge: {choice.describe()}, as it was", file=sys.stderr)
        return
    if choice.backend != "off" and args.judge is None and not _confirm(f"turn on {choice.describe()}?"):
        print("the judge stays off", file=sys.stderr)
        return
    settings.save_judge(choice)
    print(f"judge: {choice.describe()}" + (f", at most {choice.calls} calls and {choice.tokens:,} tokens a night"
                                           if choice.backend != "off" else "") + f" ({paths.own_settings_path()})")
    if choice.backend != "off":     # not called here: a call spends the person's quota; doctor --judge asks once
        print("`openmemory doctor --judge` checks that it answers: one question with nothing of yours in it, one call",
              file=sys.stderr)


_MARK = {"add": "+", "replace": "~", "remove": "-", "keep": "=", "manual": "!", "skip": "="}


def _ask(question: str) -> str:
    """One line typed at the terminal, in answer to question."""
    print(question, end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip()


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise OpenMemoryError(f"{question.rstrip('?')}: no terminal to ask on; pass --yes, or --dry-run to look first")
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_doctor(args) -> int:
    """Check that memory is connected to Claude Code (and Codex, Gemini) and working; exit 0 only when every check passes."""
    from . import setup
    findings = setup.doctor(ask_judge=args.judge)
    if args.json:
        _print_json({"healthy": setup.healthy(findings), "checks": [f.as_dict() for f in findings]})
    else:
        for f in findings:
            mark = {"ok": "✔", "fail": "✘", "note": "•"}[f.status]
            print(f"{mark} {f.check}: {f.text}" + (f"\n    fix: {f.fix}" if f.fix and f.status == "fail" else ""))
    return 0 if setup.healthy(findings) else 1


def cmd_morning(args) -> int:
    """Print the morning report: what the last sleep learnt, confirmed, failed, archived and was told."""
    if args.json:
        with _reading() as db:
            facts = db.get_state("morning")
        if facts is None:
            raise OpenMemoryError(f"no morning report yet in {paths.db_path()}; run `openmemory sleep` first")
        _print_json(json.loads(facts))
        return 0
    try:
        text = paths.morning_path().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OpenMemoryError(f"no morning report at {paths.morning_path()}; run `openmemory sleep` first") from None
    except OSError as e:
        raise OpenMemoryError(f"cannot read the morning report at {paths.morning_path()}: {e.strerror}") from e
    sys.stdout.write(text)
    return 0


def _time_arg(value, option: str):
    if value is None:
        return None
    try:
        return clock.iso(value)
    except (ValueError, TypeError):
        raise errors.UsageError(f"{option} takes an ISO 8601 time such as 2026-11-03T03:00:00Z, "
                              f"not {value!r}") from None


def cmd_recall(args) -> int:
    """Find what past sessions said and did that answers a query: passages, episodes, lessons, most relevant first."""
    from . import recall
    query = recall.usable_query(" ".join(args.query))
    if len(query) < len(" ".join(args.query)):
        print(f"openmemory: note: the query is {len(' '.join(args.query)):,} characters; recall used its first "
              f"{len(query):,}", file=sys.stderr)
    cwd = os.getcwd() if args.here else os.path.realpath(args.cwd) if args.cwd else None
    with _reading() as db:
        hits = recall.recall(db, query, k=args.k, cwd=cwd, include_archived=args.archived)
        archived = 0 if args.archived or args.json else recall.archived_matches(db, query, cwd, live=hits)
    if args.json:
        _print_json([recall.as_json(h) for h in hits])
        return 0
    print(recall.hits_text(query, hits, cwd))
    if archived:
        print(f"{archived} archived {'memory matches' if archived == 1 else 'memories match'}"
              f"{' better' if hits else ''}: add --archived")
    return 0


def cmd_show(args) -> int:
    """Open one memory by the id recall shows (e12, p45, l3): in full, with what was said around it."""
    from . import recall
    with _reading() as db:
        found = recall.open_memory(db, args.id, args.around)
    if args.json:
        _print_json(found)
    else:
        print(recall.memory_text(found))
    return 0


def cmd_remember(args) -> int:
    """Store a note in memory at once, from the terminal or a script (as the agent's `remember` tool does); the same words again in a project are not stored twice."""
    if not args.text and sys.stdin.isatty():    # typed by a person, who would otherwise see it wait in silence
        print("openmemory remember: type the note, then Ctrl-D on a line of its own "
              "(or give it on the command line: openmemory remember \"the note\")", file=sys.stderr)
    text = " ".join(args.text) if args.text else wellformed(sys.stdin.read())
    if not text.strip():    # nothing to store: what was typed is wrong in itself
        raise errors.UsageError("a note needs some text: openmemory remember \"the note\" (or the note on stdin)")
    cwd = os.path.realpath(args.cwd) if args.cwd else None if args.everywhere else os.getcwd()
    if args.cwd and not os.path.isdir(cwd):     # a typo: a note no session there would ever recall
        raise errors.UsageError(f"--cwd {paths.one_line(args.cwd)}: no such folder here; name the project's "
                                f"folder, or --everywhere for a note for every project")
    cwd = cwd and wellformed(cwd)   # a folder named in bytes that are not UTF-8: stored as its name reads
    from . import forget
    forget.refuse_kept_out(cwd)
    from .recall import TOUCH_STRENGTH
    with store.connect() as db:     # the same words in the same project again: the note stored, touched
        note_id, again, retitled, _ = db.remember_note(text, title=args.title or "", cwd=cwd, strength=TOUCH_STRENGTH)
    if args.json:   # the id as recall shows it, which forget takes
        _print_json({"id": f"e{note_id}", "cwd": cwd, "already": bool(again)})
    else:
        print(f"{'already remembered' if again else 'remembered'} as note e{note_id} "
              f"({f'project {paths.one_line(paths.project_of(cwd))}' if cwd else 'every project'})"
              + (f", now titled \"{paths.one_line(retitled)}\"" if retitled else ""))
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of 1 or more, not {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number of 0 or more, not {text!r}")
    return value


def _around(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 10, not {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose error line does not echo a secret typed as a value (`setup --purge
    <token>`: "unrecognized arguments: [REDACTED:…]"); its verbs' parsers are of this class too."""
    quiet = False   # the hook's: a bad argument is logged, never exit 2 ("block" to Claude Code)

    def error(self, message):
        if self.quiet:
            raise _HookArguments(redact(message))
        super().error(redact(message))


class _HookArguments(Exception):
    """The hook's command line could not be parsed (a flag another version wrote into settings.json)."""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="openmemory",
        description="A memory for coding agents that lasts between sessions.")
    parser.add_argument("--version", action="version", version=f"openmemory {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    def verb(name, func, **kw):
        p = verbs.add_parser(name, help=func.__doc__, description=func.__doc__, **kw)
        p.set_defaults(func=func)
        return p

    p = verb("ingest", cmd_ingest)
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="transcript files or folders (default: every Claude Code project)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing at all (for hooks and cron)")
    p.add_argument("--force", action="store_true", help="read every transcript again, changed or not")
    p.add_argument("--now", metavar="ISO", help="store as of this time, ISO 8601 (default: now); for tests and replays")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.add_argument("--model", action="store_true",
                   help="then let the configured model decide doubtful turns and lead session gists (may wait)")

    p = verb("recall", cmd_recall)
    p.add_argument("query", nargs="+", metavar="QUERY", help="what to look for, in any words")
    p.add_argument("-k", type=_positive, default=5, metavar="N", help="how many hits at most (default 5)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--here", action="store_true", help="rank this folder's project first")
    scope.add_argument("--cwd", metavar="PATH", help="rank the project of PATH first")
    p.add_argument("--archived", action="store_true", help="also search archived memories (and revive those found)")
    p.add_argument("--json", action="store_true", help="print a JSON list of hits")

    p = verb("show", cmd_show)
    p.add_argument("id", metavar="ID", help="a memory's id as recall shows it (e12, p45, l3)")
    p.add_argument("--around", type=_around, default=2, metavar="N",
                   help="passages to show on each side (0 to 10, default 2)")
    p.add_argument("--json", action="store_true", help="print the memory as one JSON object")

    p = verb("remember", cmd_remember)
    p.add_argument("text", nargs="*", metavar="TEXT", help="the note (default: read from stdin)")
    p.add_argument("--title", help="a short title (default: the note's first line)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cwd", metavar="PATH", help="the project the note belongs to (default: this folder)")
    where.add_argument("--everywhere", action="store_true", help="a note for every project")
    p.add_argument("--json", action="store_true", help="print the note's id as JSON")

    p = verb("status", cmd_status)
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = verb("lessons", cmd_lessons)
    p.add_argument("action", nargs="?", default="list", choices=("list", "approve", "reject", "edit", "move"),
                   help="list (default); approve: it goes into the agent's memory; reject: never again (until --undo-veto), as deleting "
                        "its file; edit: your own text for it (and approve it); move OLD NEW: a project folder you "
                        "moved or renamed keeps what was learnt there")
    p.add_argument("args", nargs="*", metavar="ID [TEXT]",
                   help="lesson ids as `forget` takes them (lesson:3, or l3 as recall shows it); "
                        "for edit, one id and the new text; for move, the old folder and the new")
    p.add_argument("--undo-veto", action="store_true",
                   help="approve or edit: also a lesson you rejected or whose file you deleted (the veto taken back)")
    p.add_argument("--json", action="store_true", help="print JSON (the list: with the episode ids of each source)")

    p = verb("render", cmd_render)
    p.add_argument("--max-lines", type=_whole, metavar="N",
                   help="lessons indexed per MEMORY.md (default $OPENMEMORY_INDEX_LINES, else 20)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")


    p = verb("sleep", cmd_sleep)
    p.add_argument("--now", metavar="ISO", help="the night's time, ISO 8601 (default: now); for tests and replays")
    p.add_argument("--json", action="store_true", help="print the night's report as JSON")
    p.add_argument("--no-model", action="store_true", help="use the rules alone, even when a model is configured")
    p.add_argument("--catch-up", action="store_true",
                   help="only if the last sleep is over a day old, no other sleep runs and, after a catch-up "
                        "ingest, an error or a correction came since; prints nothing (what SessionStart starts)")

    p = verb("morning", cmd_morning)
    p.add_argument("--json", action="store_true", help="print the report's facts as one JSON object")

    p = verb("forget", cmd_forget)
    p.add_argument("ids", nargs="*", metavar="ID", help="ids as recall shows them (e12, p45, l3; 12 is e12)")
    p.add_argument("--query", "-q", metavar="Q", help="forget every memory that holds each word of Q, as the "
                   "text index reads words (lists them and asks first)")
    p.add_argument("--project", metavar="PATH", help="forget everything stored for PATH and below, not another "
                   "clone of its repository (it says what it keeps; asks first)")
    p.add_argument("--session", metavar="ID", help="forget a whole session, and keep what it says later out: its id, "
                   "or its first 8 characters or more as recall shows them (asks first)")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts)")

    p = verb("backup", cmd_backup)
    p.add_argument("path", metavar="PATH", help="the new file to write (refused if it exists)")

    p = verb("paths", cmd_paths)
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = verb("setup", cmd_setup)
    p.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="make the changes without asking")
    p.add_argument("--undo", action="store_true", help="remove exactly what setup added, nothing else")
    p.add_argument("--purge", action="store_true", help="with --undo: also remove every lesson openmemory "
                                                        "wrote into Claude Code's memory folders")
    p.add_argument("--schedule", choices=("auto", "cron", "systemd", "launchd", "print", "none"), default="auto",
                   help="how to run the nightly sleep (default auto: launchd on macOS, a systemd user timer, "
                        "else cron, else print the crontab line)")
    p.add_argument("--json", action="store_true", help="print the changes as JSON")
    p.add_argument("--judge", choices=("off", "claude", "endpoint"),
                   help="the optional judge the nightly sleep asks (off by default; see OPERATIONS.md): "
                        "Claude Code headless (`claude -p`), or an OpenAI-compatible endpoint")
    p.add_argument("--judge-model", metavar="NAME", help="the judge's model (claude: default haiku)")
    p.add_argument("--judge-url", metavar="URL", help="endpoint: its OpenAI-compatible base URL")
    p.add_argument("--judge-command", metavar="PATH", help="claude: the `claude` binary (default: found on PATH)")
    p.add_argument("--judge-calls", type=_positive, metavar="N",
                   help="the judge's calls a night at most: the nightly sleep and ingest --model of the same "
                        "day (your clock) together (20)")
    p.add_argument("--judge-tokens", type=_positive, metavar="N",
                   help="the judge's tokens a night at most, counted as the calls are (60000)")

    p = verb("doctor", cmd_doctor)
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--judge", action="store_true",
                   help="ask the judge one question with nothing of yours in it (one call) to check that it answers")

    verb("serve", cmd_serve)

    p = verb("hook", cmd_hook)
    p.quiet = True
    p.add_argument("--detach", choices=("auto", "always", "never"), default="auto",
                   help="ingest in a detached process: always, never, or auto (transcripts over 2 MB)")
    return parser


def main(argv=None) -> int:
    """Run one verb; turn library errors into one line on stderr and exit code 1."""
    if argv is None:
        # Run as the command (not called in-process): Python's last collection at exit walks every
        # object the command loaded, 10 ms of a short command. Frozen first, they are left to the
        # system as the process ends; files and the database are closed by then (`with`, store.close).
        atexit.register(gc.freeze)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Shown(sys.stdout), _Shown(sys.stderr)
    try:
        return _run(argv)
    finally:
        sys.stdout, sys.stderr = streams


_TEXT_ARGUMENTS = ("query", "text", "title", "args")     # words stored or searched, never a path


def _run(argv) -> int:
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # said with the verb's own usage, not the top-level one
            verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            verbs.choices[args.verb].error(f"unrecognized arguments: {' '.join(unknown)}")
    except _HookArguments as e:     # the hook prints nothing and exits 0, whatever it is given
        _log_to_file()
        logging.getLogger("openmemory.hook").error("hook not run: openmemory hook: %s", e)
        return 0
    for name in _TEXT_ARGUMENTS:   # bytes the locale cannot decode come as lone surrogates (paths keep them)
        if getattr(args, name, None):
            setattr(args, name, wellformed(getattr(args, name)))
    try:
        return args.func(args)
    except errors.UsageError as e:     # a value that names nothing certain: said as argparse says a bad one
        _debug_traceback()              # what was typed is echoed redacted: a token given for an id, a time
        print(f"openmemory {args.verb}: error: {redact(str(e))}", file=sys.stderr)
        return 2
    except OpenMemoryError as e:
        _debug_traceback()
        print(f"openmemory: error: {redact(str(e))}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as e:  # damaged; or locked past the busy timeout, disk full, read-only
        _debug_traceback()
        print(f"openmemory: error: {store.explained(e, paths.db_path())}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("openmemory: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0  # `openmemory recall ... | head`
    except OSError as e:  # a disk full, a read-only folder, no permission: what it is and what to do
        _debug_traceback()
        print(f"openmemory: error: {errors.os_fault(e)}", file=sys.stderr)
        return 1
    except Exception as e:  # a bug: still one line, with the way to see more
        _debug_traceback()
        print(f"openmemory: error: {type(e).__name__}: {redact(str(e))} (set OPENMEMORY_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 1


# Control characters, and the characters that reorder or hide text where a terminal applies
# them (bidi overrides and isolates, direction and zero-width marks): a note, a lesson or an
# error line read from a transcript may hold them, to make what the person reads before
# approving it differ from what the agent reads.
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{HIDDEN}]")


def shown(text: str) -> str:
    """text safe to print: every control character but newline and tab (a terminal's escape
    sequences, a carriage return), every bidi or zero-width mark and every tag character
    (shorten.HIDDEN) written as \\u001b (a tag character as its two UTF-16 halves, \\udb40\\udc49);
    in JSON that is the same character."""
    return _CONTROL.sub(_escaped, text)


def _escaped(m: re.Match) -> str:
    code = ord(m.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


class _Shown:
    """A standard stream that writes control characters as shown() does: a working folder, a
    title or a path read from a transcript may hold a terminal's escape sequences; they are
    shown, never run. Everything else is the stream's (buffer, isatty, flush, fileno)."""

    def __init__(self, stream):
        self.unescaped = stream

    def write(self, text):
        return self.unescaped.write(shown(wellformed(text)))     # a name's undecodable bytes: U+FFFD

    def __getattr__(self, name):
        return getattr(self.unescaped, name)


def _unescaped(stream):
    """The stream itself, for openmemory's own escape sequences (the progress line)."""
    return getattr(stream, "unescaped", stream)


LOG_MAX_BYTES = 1024 * 1024  # one rotation kept: the log stays under 2 MB


def _log_to_file() -> None:
    """Send the server's and the hook's log lines to paths.log_path() (they may not print)."""
    os.umask(0o077)  # the log names transcripts and projects: only the person may read it
    handler = _LogFile(paths.log_path())
    formatter = _RedactingFormatter("%(asctime)s.%(msecs)03dZ %(process)d %(name)s %(levelname)s %(message)s",
                                    "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    logger = logging.getLogger("openmemory")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if os.environ.get("OPENMEMORY_DEBUG") else logging.INFO)


class _LogFile(logging.Handler):
    """The log file (rotated at LOG_MAX_BYTES, one old file kept), opened at the first line
    logged: a session start's hook usually logs none, and logging.handlers brings socket and
    pickle with it, 6 ms of a start."""

    def __init__(self, path):
        super().__init__()
        self.path, self.home, self.file = path, paths.home(), None

    def emit(self, record) -> None:
        if self.file is None:
            import logging.handlers
            try:
                self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
                self.path.parent.mkdir(exist_ok=True, mode=0o700)
                self.file = logging.handlers.RotatingFileHandler(self.path, maxBytes=LOG_MAX_BYTES, backupCount=1,
                                                                 encoding="utf-8")
            except OSError:
                self.file = logging.StreamHandler(sys.stderr)
            self.file.setFormatter(self.formatter)
        self.file.emit(record)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        super().close()


class _RedactingFormatter(logging.Formatter):
    """Log lines pass through the same redaction as everything stored (a traceback may quote input)."""

    def format(self, record) -> str:
        return redact(super().format(record))


def _debug_traceback() -> None:
    if os.environ.get("OPENMEMORY_DEBUG"):
        traceback.print_exc()


def _print_json(value, batch: int = 50_000) -> None:
    # json.dumps(value, ensure_ascii=False, indent=2) written in pieces of `batch` chunks: json.dump's
    # thousands of small writes each went through the shown() stream (a first sleep's report over
    # 60,000 sessions took seconds to print), and the whole text at once is millions of chunks
    # joined (its 29 MB report held about 200 MB while printed)
    chunks = []
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(value, _one_shot=True):
        chunks.append(chunk)
        if len(chunks) >= batch:
            sys.stdout.write("".join(chunks))
            chunks.clear()
    sys.stdout.write("".join(chunks) + "\n")


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"
