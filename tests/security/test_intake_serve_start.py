"""`judge serve` where it cannot work (issue 9): on a read-only data
directory, or with the database locked for more than its busy timeout at
start, it exited 1 with a 138-line traceback. Now one line on stderr, and
the status says what to do: 2, fix the configuration (systemd does not
restart); 75, a passing fault (the database locked or unreachable: start
again later), as `judge deliver` answers the MTA."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))


def serve(tmp_path: Path, *args: str, database: str | None = None, data_dir: Path | None = None,
          timeout: float = 20) -> subprocess.CompletedProcess:
    config = tmp_path / "judge.toml"
    config.write_text('[judge]\naddress = "judge@example.test"\n' + (f'database = "{database}"\n' if database else ""))
    return subprocess.run([JUDGE_BIN, "-c", str(config), "--data-dir", str(data_dir or tmp_path / "data"), "serve",
                           *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line(run: subprocess.CompletedProcess) -> str:
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("judge: ") and "Traceback" not in run.stderr
    return lines[0]


def test_a_data_dir_under_a_file_is_a_configuration_error(tmp_path):
    (tmp_path / "file").write_text("")
    run = serve(tmp_path, "--once", data_dir=tmp_path / "file" / "sub")
    assert run.returncode == 2
    assert "Not a directory" in one_line(run)


def test_a_read_only_data_dir_is_a_configuration_error(tmp_path):
    """An existing data directory the judge cannot write (immutable: root,
    as the tests run, writes through chmod): the database cannot be created."""
    data = tmp_path / "data"
    data.mkdir()
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(data)]).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        run = serve(tmp_path, "--once", data_dir=data)
    finally:
        subprocess.run(["chattr", "-i", str(data)], check=True)
    assert run.returncode == 2
    line = one_line(run)
    assert "unable to open database file" in line and "writable" in line


def test_a_locked_database_at_start_is_a_temporary_failure(tmp_path):
    """Another process holds the SQLite write lock past the busy timeout (1 s
    here, from the URL; 30 s by default): exit 75 within seconds."""
    db = tmp_path / "j.sqlite3"
    url = f"sqlite:///{db}?timeout=1"
    assert serve(tmp_path, "--once", database=url).returncode == 0  # created and upgraded
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        t0 = time.monotonic()
        run = serve(tmp_path, database=url)
        took = time.monotonic() - t0
    finally:
        holder.close()
    assert run.returncode == 75
    assert "database is locked" in one_line(run)
    assert took < 10


def test_an_unreachable_postgresql_is_a_temporary_failure(tmp_path):
    run = serve(tmp_path, database="postgresql://judge:s3cret@127.0.0.1:1/judge")
    assert run.returncode == 75
    line = one_line(run)
    assert "Connection refused" in line and "s3cret" not in line


def test_a_missing_postgresql_database_is_a_configuration_error(tmp_path, postgres_admin_url):
    host = postgres_admin_url.split("://", 1)[1].rsplit("/", 1)[0]
    run = serve(tmp_path, database=f"postgresql://{host}/judge_no_such_database")
    assert run.returncode == 2
    assert "does not exist" in one_line(run)
