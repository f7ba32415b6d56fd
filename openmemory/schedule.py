"""When sleep runs: the nightly job (crontab, systemd user timer or launchd agent, by platform),
the catch-up a session start gives a laptop that was closed all night, and the lock that
keeps two sleeps from running at once.

Every outside program (crontab, systemctl, launchctl) is named by an environment variable
(OPENMEMORY_CRONTAB, OPENMEMORY_SYSTEMCTL, OPENMEMORY_LAUNCHCTL) so tests can point them at
stand-ins and never touch the person's real schedule.
"""
import contextlib
import fcntl
import os
import shutil
import sys
import time
from pathlib import Path

from . import files, paths
from .clock import parse_time
from .errors import OpenMemoryError, RenderError

MODES = ("auto", "cron", "systemd", "launchd", "print", "none")
HOUR, MINUTE = 3, 30                 # 03:30 local time: after a working day, before the next
CATCH_UP_AFTER_S = 24 * 3600         # a night more than a day old is caught up (when there is news)
CATCH_UP_RETRY_S = 3600              # session starts look at most once an hour (a failed catch-up too)
CRON_TAG = "# openmemory nightly sleep"
UNIT = "openmemory-sleep"
LAUNCHD_LABEL = "com.openmemory.sleep"
SLEEP_WAIT_S = 6 * 3600              # a nightly or manual sleep waits this long for one already running


class ScheduleError(OpenMemoryError):
    """The nightly job could not be installed or removed."""


def program(name: str) -> str:
    """The outside program to run: $OPENMEMORY_<NAME> (tests), else its usual name."""
    return os.environ.get(f"OPENMEMORY_{name.upper()}") or name


def choose(mode: str = "auto") -> str:
    """The way to schedule on this machine: launchd on macOS, a systemd user timer where a user
    manager runs, else cron where crontab exists, else print (the person adds it by hand)."""
    if mode != "auto":
        return mode
    if sys.platform == "darwin":
        return "launchd"
    if shutil.which(program("systemctl")) and _ok([program("systemctl"), "--user", "show-environment"]):
        return "systemd"
    if shutil.which(program("crontab")):
        return "cron"
    return "print"


def nightly_command(run: str, env_prefix: str = "") -> str:
    """The sh command line of one night: a catch-up ingest, then sleep (its report to morning.md)."""
    return f"{env_prefix}{run} ingest --quiet && {env_prefix}{run} sleep >/dev/null"


def cron_line(command: str) -> str:
    """The crontab entry; cron turns an unescaped % into a newline."""
    return f"{MINUTE} {HOUR} * * * {command.replace('%', chr(92) + '%')} {CRON_TAG}"


# -- cron ------------------------------------------------------------------------------------

def crontab_lines() -> list[str]:
    """The person's crontab, line by line; [] when they have none."""
    p = _run([program("crontab"), "-l"], check=False)
    if p.returncode != 0:
        if "no crontab" in p.stderr.lower():
            return []
        raise ScheduleError(f"`crontab -l` failed: {p.stderr.strip() or p.returncode}")
    return p.stdout.splitlines()


def cron_install(line: str) -> bool:
    lines = crontab_lines()
    if line in lines:
        return False
    _run([program("crontab"), "-"], input="\n".join(lines + [line]) + "\n")
    return True


def cron_remove(line: str) -> bool:
    lines = crontab_lines()
    if line not in lines:
        return False
    _run([program("crontab"), "-"], input="".join(f"{x}\n" for x in lines if x != line))
    return True


# -- systemd user timer ------------------------------------------------------------------------

def systemd_dir() -> Path:
    return paths.systemd_user_dir()


def systemd_units(command: str) -> dict:
    """{file name: text} of the service and its timer (Persistent: a missed night runs at boot)."""
    service = ("[Unit]\nDescription=openmemory nightly sleep (catch-up ingest, then sleep)\n\n"
               "[Service]\nType=oneshot\n"
               f"ExecStart=/bin/sh -c {_systemd_quote(command)}\n")
    timer = ("[Unit]\nDescription=openmemory nightly sleep\n\n"
             f"[Timer]\nOnCalendar=*-*-* {HOUR:02d}:{MINUTE:02d}:00\nPersistent=true\n\n"
             "[Install]\nWantedBy=timers.target\n")
    return {f"{UNIT}.service": service, f"{UNIT}.timer": timer}


def systemd_install(units: dict) -> list[str]:
    """Write the units and enable the timer; when systemctl fails (no user bus), the unit files
    this call wrote are taken away again, so nothing looks scheduled that is not."""
    folder = systemd_dir()
    new = [name for name in units if not (folder / name).exists()]
    for name, text in units.items():
        files.write_config(folder / name, text.encode("utf-8"))
    try:
        _run([program("systemctl"), "--user", "daemon-reload"])
        _run([program("systemctl"), "--user", "enable", "--now", f"{UNIT}.timer"])
    except BaseException:
        for name in new:
            files.remove_config_if_unchanged(folder / name, units[name].encode("utf-8"))
        raise
    return [str(folder / name) for name in units]


def systemd_remove(unit_files: list[str], units: dict) -> list[str]:
    """Disable the timer and delete the unit files that are still exactly what setup wrote."""
    _run([program("systemctl"), "--user", "disable", "--now", f"{UNIT}.timer"], check=False)
    removed = [f for f in unit_files if files.remove_config_if_unchanged(Path(f), units[Path(f).name].encode("utf-8"))]
    _run([program("systemctl"), "--user", "daemon-reload"], check=False)
    return removed


# -- launchd -------------------------------------------------------------------------------------

def launchd_path() -> Path:
    return paths.launch_agents_dir() / files.LAUNCHD_AGENT


def launchd_plist(command: str) -> bytes:
    """The agent: launchd runs a StartCalendarInterval job missed while the Mac slept when it wakes."""
    import plistlib
    return plistlib.dumps({
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": ["/bin/sh", "-c", command],
        "StartCalendarInterval": {"Hour": HOUR, "Minute": MINUTE},
        "StandardErrorPath": str(paths.log_path().parent / "sleep.err"),
    })


def launchd_install(plist: bytes) -> str:
    path = launchd_path()
    files.write_config(path, plist)
    _run([program("launchctl"), "load", "-w", str(path)])
    return str(path)


def launchd_remove(plist: bytes) -> bool:
    path = launchd_path()
    if read_bytes(path) != plist:
        return False
    _run([program("launchctl"), "unload", "-w", str(path)], check=False)
    return files.remove_config_if_unchanged(path, plist)


# -- the catch-up sleep and the sleep lock -------------------------------------------------------

def sleep_lock_path() -> Path:
    return paths.home() / "sleep.lock"


@contextlib.contextmanager
def sleep_lock(wait: bool = True):
    """Hold the one sleep lock; yields False at once (without waiting) when wait is False and it is taken."""
    try:
        lock = files.Lock(sleep_lock_path().name, SLEEP_WAIT_S if wait else 0, "sleep")
        lock.__enter__()
    except RenderError:
        if wait:
            raise
        yield False
        return
    try:
        yield True
    finally:
        lock.__exit__(None, None, None)


def sleep_running() -> bool:
    """Whether some process holds the sleep lock now."""
    try:
        fd = os.open(sleep_lock_path(), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def sleep_due(last_sleep: str | None, now: float | None = None) -> bool:
    """Whether the last sleep is more than a day old (or there never was one)."""
    if not last_sleep:
        return True
    try:
        last = parse_time(last_sleep).timestamp()
    except ValueError:
        return True
    return (now if now is not None else time.time()) - last > CATCH_UP_AFTER_S


def catch_up_stamp() -> Path:
    return paths.home() / "catch-up.stamp"


CATCH_UP_STARTED = "catch-up sleep started"


CATCH_UP_LOCK = "catch-up.lock"    # held by the one session start looking (two terminals opened at once)


def start_catch_up(look) -> str:
    """At a session start: start `sleep --catch-up` detached when the last night is over a day old
    and an error or a correction came since; returns what was done.

    look: a callable returning (the last sleep's time, whether anything came since to learn
    from), called only when needed. Cheap first: a recent look or a running sleep ends it
    before the database is opened. A look that finds nothing new leaves no stamp: the session
    now starting may bring something, and the next start looks again. Two session starts at
    once: the one that holds the catch-up lock looks, the other starts nothing (and one that
    gets the lock after the first has looked finds its stamp), so one catch-up is started.
    """
    if not paths.db_path().exists():
        return "no memory yet; nothing to catch up"
    if _looked_lately():
        return "looked within the hour; not again"
    if sleep_running():
        return "a sleep is running; no catch-up"
    try:
        claim = files.Lock(CATCH_UP_LOCK, 0, "session start")
        claim.__enter__()
    except RenderError:
        return "another session start is looking; not again"
    try:
        if _looked_lately():    # the other start looked (and started one) while this one came to the lock
            return "looked within the hour; not again"
        return _look_and_start(look)
    finally:
        claim.__exit__(None, None, None)


def _looked_lately() -> bool:
    try:
        return time.time() - catch_up_stamp().stat().st_mtime < CATCH_UP_RETRY_S
    except FileNotFoundError:
        return False


def _look_and_start(look) -> str:
    stamp = catch_up_stamp()
    try:
        last, new = look()
    except BaseException:
        files.write_own(stamp, b"")  # a look that fails is not tried again within the hour
        raise
    if not sleep_due(last):
        files.write_own(stamp, b"")  # looked now: not again within the hour
        return f"last sleep {last}: not due"
    if not new:
        return f"last sleep {last or 'never'}: nothing new to learn from since; no catch-up"
    files.write_own(stamp, b"")  # started: not again within the hour
    import subprocess  # only now: the usual session start returns before this
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    subprocess.Popen([sys.executable, "-m", "openmemory", "sleep", "--catch-up"], env=env,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, cwd=str(paths.home()))
    return f"last sleep {last or 'never'}: {CATCH_UP_STARTED}"


# -- helpers -------------------------------------------------------------------------------------

def _run(argv, input=None, check=True):
    import subprocess
    try:
        p = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ScheduleError(f"cannot run `{argv[0]}`: {e}") from e
    if check and p.returncode != 0:
        raise ScheduleError(f"`{' '.join(argv)}` failed: {p.stderr.strip() or p.returncode}")
    return p


def _ok(argv) -> bool:
    import subprocess
    try:
        return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _systemd_quote(text: str) -> str:
    """One ExecStart argument: double-quoted, with systemd's own escapes (and % doubled)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$") + '"'


def read_text(path) -> str | None:
    data = files.read(Path(path))
    return None if data is None else data.decode("utf-8", "replace")


def read_bytes(path) -> bytes | None:
    return files.read(Path(path))
