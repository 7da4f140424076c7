"""`judge deliver --background` with no daemon on the store: the mail is
stored, and a process of its own runs it while the MTA goes on.

Running a mail needs all of the judge (SQLAlchemy, the commands, the
templates: half a second and more as a process), which an MTA would wait
for once per mail. So deliver, once the mail is committed, starts this
module as a process of its own (`python -m judge.deliver_runner`), in a
session of its own, with none of the MTA's pipes (its output goes to
DATA/deliver.log), and exits 0 at once; the runner runs the stored mail as
a daemon's pass does. It then stays a few seconds as the store's runner: it
holds the wake-up FIFO (judge.wake) as the daemon does, so the next delivers
of a burst wake it instead of starting runners of their own, and it exits
once LINGER seconds pass with no mail.

One runner at a time (DATA/deliver-runner.lock, which holds the pid of
the runner that has it): a runner started
while another holds the lock exits at once, and the holder looks at the
store again after it lets go of the lock, so a mail committed before the
lock was tried is never left for nobody. Nothing here is needed for the
mail to be safe: it is committed before the runner starts, and every pass
of any judge process runs all stored mail that waits.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
from pathlib import Path

from judge.config import Config

log = logging.getLogger(__name__)

LINGER = 10.0  # seconds a runner waits for the next delivered mail
LOCK = "deliver-runner.lock"
LOG = "deliver.log"
LOG_BYTES = 1_000_000  # past this the log is moved to deliver.log.1 when a runner starts
ROUNDS = 3  # passes of the lock at most: mail that keeps failing waits for the next pass of any process


def start(config_path: Path | None, data_dir: Path | None, log_dir: Path) -> bool:
    """Start the runner on the configuration `config_path` (None: the
    built-in defaults) and `data_dir` (None: the configuration's); True once
    it is started, False if it could not be (the caller runs the mail
    itself). The MTA's pipes are never the runner's: its standard input is
    /dev/null, its output DATA/deliver.log (`log_dir`)."""
    import shutil
    import subprocess

    # Background work, from its first instruction: on a busy machine the
    # deliver the MTA waits for (still exiting) and the MTA go first.
    nice = shutil.which("nice")
    argv = [*([nice, "-n", "10"] if nice else []), sys.executable, "-m", "judge.deliver_runner"]
    if config_path is not None:
        argv += ["--config", str(config_path)]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / LOG
        try:
            if path.stat().st_size > LOG_BYTES:
                os.replace(path, path.with_name(LOG + ".1"))
        except FileNotFoundError:
            pass
        with open(path, "ab") as out:
            os.chmod(path, 0o640)
            subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    except OSError as err:
        log.warning("no background runner (%s): the mail is run here", err)
        return False
    return True


def main(argv: list[str] | None = None) -> None:
    """`python -m judge.deliver_runner [--config PATH] [--data-dir DIR]`:
    be the runner (started by `judge deliver --background`)."""
    import argparse

    from judge.config import load_config

    parser = argparse.ArgumentParser(prog="judge.deliver_runner")
    parser.add_argument("--config", type=Path)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    config = load_config(args.config, data_dir=args.data_dir)
    from judge.cli import _use_grammar_cache

    _use_grammar_cache(config)
    try:
        run(config)
    except Exception:
        log.exception("the background runner failed; the stored mail waits for the next pass")
        raise SystemExit(1) from None


def run(config: Config) -> None:
    """Be the store's runner while the lock is ours (see the module's doc)."""
    from judge.app import build_judge

    judge = None
    for _ in range(ROUNDS):
        lock = os.open(config.data_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # a runner is at work, and looks at the store again after it lets go
            os.ftruncate(lock, 0)
            os.write(lock, f"{os.getpid()}\n".encode())  # who runs now, for the operator (and the bench)
            if judge is None:
                judge = build_judge(config)
            _serve_until_idle(judge)
        finally:
            os.close(lock)  # lets go of the lock
        if not _waiting(judge):
            return


def _serve_until_idle(judge) -> None:
    """Passes, each at once after a wake-up, until LINGER seconds bring none."""
    from judge.wake import WakeChannel, wake_path

    try:
        wake = WakeChannel(wake_path(judge.config.data_dir, judge.config.database_url))
    except OSError as err:  # the next delivers start runners of their own: slower, nothing lost
        log.warning("no wake-up FIFO (%s): one pass only", err)
        wake = None
    try:
        while True:
            judge.run_once()
            if wake is None or not wake.wait(LINGER):
                break
    finally:
        if wake is not None:
            # The daemon's own way of stopping being woken: one more look at
            # the store after the FIFO is closed (Judge._close_wake).
            judge._close_wake(wake)


def _waiting(judge) -> bool:
    """Whether stored mail waits to be run (it came while the lock was held)."""
    from sqlalchemy import func, select

    from judge.store.models import InboundMessage

    with judge.sessions() as s:
        return bool(s.scalar(select(func.count()).where(InboundMessage.status == "new")))


if __name__ == "__main__":
    main()
