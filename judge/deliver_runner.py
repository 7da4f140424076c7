"""`judge deliver --background` with no daemon on the store: the mail is
stored, and a process of its own runs it while the MTA goes on.

Running a mail needs all of the judge (SQLAlchemy, the commands, the
templates: half a second and more as a process), which an MTA would wait
for once per mail. So deliver, once the mail is committed, forks: the parent
says what it did and exits 0 at once; the child leaves the MTA's session and
pipes (its output goes to DATA/deliver.log) and runs the stored mail as a
daemon's pass does. It then stays a few seconds as the store's runner: it
holds the wake-up FIFO (judge.wake) as the daemon does, so the next delivers
of a burst wake it instead of starting runners of their own, and it exits
once LINGER seconds pass with no mail.

One runner at a time (DATA/deliver-runner.lock, which holds the pid of
the runner that has it): a runner started
while another holds the lock exits at once, and the holder looks at the
store again after it lets go of the lock, so a mail committed before the
lock was tried is never left for nobody. Nothing here is needed for the
mail to be safe: it is committed before the fork, and every pass of any
judge process runs all stored mail that waits.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys

from judge.config import Config

log = logging.getLogger(__name__)

LINGER = 10.0  # seconds a runner waits for the next delivered mail
LOCK = "deliver-runner.lock"
LOG = "deliver.log"
LOG_BYTES = 1_000_000  # past this the log is moved to deliver.log.1 when a runner starts
ROUNDS = 3  # passes of the lock at most: mail that keeps failing waits for the next pass of any process


def start(config: Config) -> bool:
    """Fork the runner; True in the parent once it is started, False if it
    could not be (the caller runs the mail itself). The child never returns."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid:
        return True
    status = 0
    try:
        os.setsid()  # out of the MTA's session and process group
        _detach(config)
        run(config)
    except BaseException:
        log.exception("the background runner failed; the stored mail waits for the next pass")
        status = 1
    finally:
        logging.shutdown()
        os._exit(status)


def _detach(config: Config) -> None:
    """Standard input from /dev/null, output to DATA/deliver.log: the MTA
    waits for the end of its pipes, which must not wait for this process."""
    path = config.data_dir / LOG
    try:
        if path.stat().st_size > LOG_BYTES:
            os.replace(path, path.with_name(LOG + ".1"))
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    try:
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
    except OSError:
        out = null
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)


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
