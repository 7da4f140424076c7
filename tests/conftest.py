"""Shared fixtures: a database on SQLite and on PostgreSQL, and a judge
running against Maildir folders with a clock the tests move."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy import create_engine, text

# The suite is reproducible: hypothesis draws the same examples every run
# (CI must not fail by chance). Hunting for new counterexamples is a run of
# its own: HYPOTHESIS_PROFILE=deep pytest tests/test_mail_outbound.py ...
settings.register_profile("ci", derandomize=True)
settings.register_profile("deep", max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

PG_ADMIN_URL = os.environ.get("JUDGE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def _pg_up() -> bool:
    try:
        eng = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 3})
        with eng.connect() as c:
            c.execute(text("select 1"))
        eng.dispose()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    """PostgreSQL must run for the suite (design card); start it if it is down."""
    if not _pg_up():
        versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
        if versions and shutil.which("pg_ctlcluster"):
            subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"],
                           check=False)
    if not _pg_up():
        pytest.fail(f"PostgreSQL is not reachable at {PG_ADMIN_URL}")
    return PG_ADMIN_URL


@pytest.fixture
def postgres_url(postgres_admin_url):
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    name = f"judge_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = postgres_admin_url.rsplit("/", 1)[0] + "/" + name
    yield url
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'judge.sqlite3'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def harness(tmp_path: Path, database_url: str):
    from tests.harness import Harness

    h = Harness(tmp_path / "data", database_url)
    yield h
    h.close()


# Real SMTP servers (aiosmtpd on loopback) for any test that asks for them.
from tests.conftest_smtp import smtp_server, smtp_server_factory, tls_files  # noqa: E402,F401
from tests.conftest_mail import mailrig  # noqa: E402,F401
