"""Start-up of the `judge` command as a process (issue 12).

Run:  .venv/bin/python bench/bench_startup.py [--runs 20]

Times, as whole processes (fork, interpreter, imports, work, exit), the
median of --runs runs of:
  - the baseline `python -c pass` (the venv's python),
  - `judge deliver` of an ordinary player mail (a signed-on player of a
    preference game sends SET PREFERENCE; its own Message-ID each time) on a
    SQLite store in a temporary directory, at the default password cost,
  - `judge resolve` of a 7-player Blind Auction,
  - `judge resolve` of a 7-player preference game.
The runs are interleaved (one of each in turn), so a slow phase of the
machine hits all alike. Each line gives the median, its difference to the
baseline and the ratio, and the issue's aim with met or not. Nothing is
asserted; the aims are for an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
JUDGE = [PYTHON, "-m", "judge"]
# Process time at most, in seconds (issue 12).
AIMS = {"deliver": 0.3, "resolve blind-auction": 0.3, "resolve preference": 0.5}

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


def timed(argv: list[str], stdin: bytes | None = None, env: dict | None = None) -> float:
    start = perf_counter()
    run = subprocess.run(argv, input=stdin, env=env, cwd=ROOT, capture_output=True)
    elapsed = perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {run.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        config = work / "judge.toml"
        config.write_text(f'[judge]\naddress = "judge@example.test"\n'
                          f'database = "sqlite:///{work / "judge.sqlite3"}"\ndata_dir = "{work / "data"}"\n')
        env = {**os.environ, "JUDGE_CONFIG": str(config)}
        # The game and its player, made before timing (the first mail also
        # creates the database).
        timed(JUDGE + ["deliver"], mail("gm@example.test", "CREATE ?bench gmpw preference\nSET MANUAL START"), env)
        timed(JUDGE + ["deliver"], mail("player@example.test", "SIGNON ?bench pw"), env)
        files = {}
        for name, data in (("blind-auction", BLIND_AUCTION), ("preference", PREFERENCE)):
            files[name] = work / f"{name}.json"
            files[name].write_text(json.dumps(data))
        cases = {
            "python -c pass": lambda: timed([PYTHON, "-c", "pass"]),
            "deliver": lambda: timed(JUDGE + ["deliver"], mail("player@example.test",
                                                               "SIGNON ?bench pw\nSET PREFERENCE FRIGATE"), env),
            "resolve blind-auction": lambda: timed(JUDGE + ["resolve", str(files["blind-auction"]), "--seed", "00ff"]),
            "resolve preference": lambda: timed(JUDGE + ["resolve", str(files["preference"]), "--seed", "00ff"]),
        }
        for run in cases.values():
            run()  # warm: bytecode caches, numba's cache, the OS's file cache
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, run in cases.items():
                times[name].append(run())
    base = statistics.median(times["python -c pass"])
    print(f"median of {args.runs} runs each, as processes ({PYTHON})")
    print(f"{'command':<24} {'median':>8} {'- base':>8} {'/ base':>7}  aim")
    for name, values in times.items():
        median = statistics.median(values)
        aim = AIMS.get(name)
        verdict = f"<= {aim:.1f} s: {'met' if median <= aim else 'NOT met'}" if aim else "(baseline)"
        print(f"{name:<24} {median:7.3f}s {median - base:7.3f}s {median / base:6.1f}x  {verdict}")


if __name__ == "__main__":
    main()
