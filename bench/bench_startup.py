"""Start-up of the `judge` command as a process (issue 12).

Run:  .venv/bin/python bench/bench_startup.py [--runs 20]

Times, as whole processes (fork, interpreter, imports, work, exit), the
median of --runs runs of:
  - the baseline `python -c pass` (the venv's python),
  - `judge deliver` of an ordinary player mail (a signed-on player of a
    preference game sends SET PREFERENCE; its own Message-ID each time) on a
    SQLite store in a temporary directory, at the default password cost,
    with the daemon (`judge serve`, started by the bench and stopped at its
    end) running on that store, as in production: deliver stores the mail
    and wakes the daemon, which runs it (the bench checks every mail was
    run); the aim is for this one,
  - `judge deliver --background` (the line docs/operating.md gives the
    MTA) with no daemon on the store ("deliver --background, no daemon";
    issue 29's aim): deliver stores the mail and forks a runner, which runs
    it; each run is cold: the bench waits for the mail to be answered and
    stops the runner (its pid is in DATA/deliver-runner.lock) before the
    next run, so no run finds one left waiting,
  - plain `judge deliver` with no daemon ("deliver, no daemon, runs it";
    for information): deliver runs the mail itself and prints its outcome,
  - `judge resolve` of a 7-player Blind Auction,
  - `judge resolve` of a 7-player preference game.
The runs are interleaved (one of each in turn), so a slow phase of the
machine hits all alike. Each line gives the median wall time, its ratio to
the baseline, and the issue's aim with met or not. Nothing is
asserted; the aims are for an otherwise idle machine. Beside the wall time,
each process's own CPU time (user + system) and its ratio to the
baseline's: on a machine shared with other work the wall times move by
half, the CPU times hardly.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
JUDGE = [PYTHON, "-m", "judge"]
# Process time at most, in seconds (issue 12).
AIMS = {"deliver": 0.3, "deliver --background, no daemon": 0.3, "resolve blind-auction": 0.3,
        "resolve preference": 0.5}

BLIND_AUCTION = {"method": "blind-auction", "players": list("abcdefg"), "submissions": {
    "a": "A 40, E 30, F 20, G 18, I 14, R 12, T 6", "b": "No Preference", "c": "E 40, F 30, G 20, I 18, R 14, T 12, A 6",
    "d": "F 70, G 70", "e": "No Preference", "f": "T 40, R 30, I 20, G 18, F 14, E 12, A 6", "g": "No Preference"}}
PREFERENCE = {"method": "preference", "players": list("abcdefg"), "submissions": {
    "a": "FRIGATE", "b": "EGTRAFI", "c": "ITAGERF", "d": "RAGITEF", "e": "TAIGREF", "f": "GEFARIT", "g": "AIGTERF"}}


def mail(sender: str, body: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, "judge@example.test", "commands"
    msg["Message-ID"] = make_msgid(domain="bench.test")
    msg.set_content(body)
    return msg.as_bytes()


CPU: dict[str, list[float]] = {}  # each case's CPU seconds (user + system) per run, beside its wall time
_case: list[str] = [""]  # the case being timed


def timed(argv: list[str], stdin: bytes | None = None, env: dict | None = None) -> float:
    """The wall time of the process, until it exited and closed its output
    (what an MTA waits for); its CPU time (user + system, of it alone: not a
    background runner it started) goes to CPU, a figure a busy machine
    hardly moves."""
    # As an installed judge runs: with its bytecode caches (pip writes them
    # at install), whatever this shell says.
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = perf_counter()
    run = subprocess.run(argv, input=stdin, env=env, cwd=ROOT, capture_output=True)
    elapsed = perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {run.stderr.decode()[-2000:]}")
    CPU.setdefault(_case[0], []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def store(work: Path, name: str) -> dict:
    """The environment of a judge on a SQLite store of its own, with the
    game and its player (made before timing; the first mail also creates the
    database)."""
    config = work / f"{name}.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\n'
                      f'database = "sqlite:///{work / name / "judge.sqlite3"}"\ndata_dir = "{work / name}"\n')
    env = {**os.environ, "JUDGE_CONFIG": str(config)}
    timed(JUDGE + ["deliver"], mail("gm@example.test", "CREATE ?bench gmpw preference\nSET MANUAL START"), env)
    timed(JUDGE + ["deliver"], mail("player@example.test", "SIGNON ?bench pw"), env)
    return env


def start_daemon(work: Path, env: dict) -> subprocess.Popen:
    log = work / "serve.log"
    with log.open("wb") as out:
        daemon = subprocess.Popen(JUDGE + ["serve"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  env={**env, "PYTHONUNBUFFERED": "1"}, cwd=ROOT)
    deadline = time.monotonic() + 60
    while b"judge: running" not in log.read_bytes():
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"judge serve did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    return daemon


def handed_off(env: dict, work: Path) -> float:
    """`judge deliver --background` on the store `alone`, timed; then (not
    timed) its mail answered and its runner stopped, so the next run is cold."""
    raw = mail("player@example.test", "SIGNON ?bench pw\nSET PREFERENCE FRIGATE")
    elapsed = timed(JUDGE + ["deliver", "--background"], raw, env)
    deadline = time.monotonic() + 60
    while waiting(work / "alone" / "judge.sqlite3"):
        if time.monotonic() > deadline:
            sys.exit("the background runner did not run its mail: the figure is void")
        time.sleep(0.02)
    lock = work / "alone" / "deliver-runner.lock"
    try:
        pid = int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        pid = 0
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
            while os.path.exists(f"/proc/{pid}"):
                time.sleep(0.02)
        except ProcessLookupError:
            pass
    return elapsed


def waiting(database: Path) -> int:
    """Mails stored and not run yet."""
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT count(*) FROM inbound_messages WHERE status = 'new'").fetchone()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        served, alone = store(work, "served"), store(work, "alone")
        files = {}
        for name, data in (("blind-auction", BLIND_AUCTION), ("preference", PREFERENCE)):
            files[name] = work / f"{name}.json"
            files[name].write_text(json.dumps(data))
        daemon = start_daemon(work, served)
        try:
            cases = {
                "python -c pass": lambda: timed([PYTHON, "-c", "pass"]),
                "deliver": lambda: timed(JUDGE + ["deliver"], mail("player@example.test",
                                                                   "SIGNON ?bench pw\nSET PREFERENCE FRIGATE"), served),
                "deliver --background, no daemon": lambda: handed_off(alone, work),
                "deliver, no daemon, runs it": lambda: timed(JUDGE + ["deliver"], mail(
                    "player@example.test", "SIGNON ?bench pw\nSET PREFERENCE FRIGATE"), alone),
                "resolve blind-auction": lambda: timed(JUDGE + ["resolve", str(files["blind-auction"]), "--seed",
                                                                "00ff"]),
                "resolve preference": lambda: timed(JUDGE + ["resolve", str(files["preference"]), "--seed", "00ff"]),
            }
            for name, run in cases.items():
                _case[0] = f"warm {name}"
                run()  # warm: bytecode caches, numba's cache, the OS's file cache
            said = subprocess.run(JUDGE + ["deliver"], input=mail("player@example.test", "LIST"), env=served, cwd=ROOT,
                                  capture_output=True).stdout.decode()
            if "the daemon is processing it" not in said:
                sys.exit(f"deliver did not hand its mail to the daemon: {said}")
            times: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, run in cases.items():
                    _case[0] = name
                    times[name].append(run())
            # The daemon ran every mail deliver handed it (else the figure
            # would time a queue nobody serves).
            deadline = time.monotonic() + 30
            while (left := waiting(work / "served" / "judge.sqlite3")) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=30)
        if left:
            sys.exit(f"the daemon left {left} delivered mails unrun: the deliver figure is void")
    base = statistics.median(times["python -c pass"])
    cpu_base = statistics.median(CPU["python -c pass"])
    print(f"median of {args.runs} runs each, as processes ({PYTHON}); load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'command':<32} {'wall':>8} {'/ base':>7} {'CPU':>8} {'/ base':>7}  aim (wall)")
    for name, values in times.items():
        median, cpu = statistics.median(values), statistics.median(CPU[name])
        aim = AIMS.get(name)
        verdict = (f"<= {aim:.1f} s: {'met' if median <= aim else 'NOT met'}" if aim
                   else "(baseline)" if name == "python -c pass" else "(for information)")
        print(f"{name:<32} {median:7.3f}s {median / base:6.1f}x {cpu:7.3f}s {cpu / cpu_base:6.1f}x  {verdict}")


if __name__ == "__main__":
    main()
