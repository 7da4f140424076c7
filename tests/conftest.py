"""Shared fixtures: a database on SQLite and on PostgreSQL, and a judge
running against Maildir folders with a clock the tests move."""

from __future__ import annotations

import os
import shutil
import sqlite3
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

# The many short `judge serve` processes of the suite build no solver
# kernels in the background (a minute of CPU each, stopped when they stop);
# tests/test_compiled_kernels.py turns it back on where the build is tested.
os.environ.setdefault("JUDGE_KERNEL_BUILD", "off")

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


def _pg_database(admin_url: str, prefix: str, template: str | None = None) -> str:
    """A new database (a copy of `template`, if given); its name."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
    admin.dispose()
    return name


def _pg_drop(admin_url: str, name: str) -> None:
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _pg_url(admin_url: str, name: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture
def postgres_url(postgres_admin_url):
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    name = _pg_database(postgres_admin_url, "judge_t")
    yield _pg_url(postgres_admin_url, name)
    _pg_drop(postgres_admin_url, name)


# Migrations run once per test session (per xdist worker), into a template;
# a test's store is a copy of it: a file copy on SQLite, CREATE DATABASE
# ... TEMPLATE on PostgreSQL (milliseconds, where the migrations take a
# third of a second). The judge's own upgrade() then finds the store at the
# newest migration and leaves it, as it does with every store but a new one.

@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory) -> Path:
    from judge.store.db import make_engine, upgrade

    path = tmp_path_factory.mktemp("store-template") / "judge.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def _postgres_template(postgres_admin_url):
    from judge.store.db import make_engine, upgrade

    name = _pg_database(postgres_admin_url, "judge_template")
    engine = make_engine(_pg_url(postgres_admin_url, name))
    upgrade(engine)
    engine.dispose()  # a template takes no connection while it is copied
    yield name
    _pg_drop(postgres_admin_url, name)


def _sqlite_copy(template: Path, path: Path) -> None:
    # The backup API, not a file copy: it carries what the template's WAL holds.
    src, dst = sqlite3.connect(template), sqlite3.connect(path)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@pytest.fixture
def migrated_postgres_url(postgres_admin_url, _postgres_template):
    """A PostgreSQL database at the newest migration for one test, dropped afterwards."""
    name = _pg_database(postgres_admin_url, "judge_t", template=_postgres_template)
    yield _pg_url(postgres_admin_url, name)
    _pg_drop(postgres_admin_url, name)


# The PostgreSQL half of every store test carries the mark `postgresql`:
# `pytest -m "not postgresql"` is the SQLite lane alone, `-m postgresql` the
# other; a plain `pytest` (README, .ci/run) runs both.
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def database_kind(request) -> str:
    """"sqlite" or "postgresql": every store fixture of one test is of this kind."""
    return request.param


@pytest.fixture
def database_url(database_kind, tmp_path: Path, request) -> str:
    """An empty store (no table yet) on SQLite and on PostgreSQL; in a test
    that also asks for `harness`, the harness's store (migrated)."""
    if "harness" in request.fixturenames:
        return request.getfixturevalue("migrated_database_url")
    if database_kind == "sqlite":
        return f"sqlite:///{tmp_path / 'judge.sqlite3'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def new_store(database_kind, tmp_path: Path, request):
    """make(name) -> the URL of a new store at the newest migration, of the
    test's kind (SQLite: tmp_path/NAME.sqlite3); dropped after the test."""
    made: list[str] = []

    def make(name: str) -> str:
        if database_kind == "sqlite":
            path = tmp_path / f"{name}.sqlite3"
            _sqlite_copy(request.getfixturevalue("_sqlite_template"), path)
            return f"sqlite:///{path}"
        admin = request.getfixturevalue("postgres_admin_url")
        db = _pg_database(admin, "judge_t", template=request.getfixturevalue("_postgres_template"))
        made.append(db)
        return _pg_url(admin, db)

    yield make
    for db in made:
        _pg_drop(request.getfixturevalue("postgres_admin_url"), db)


@pytest.fixture
def migrated_database_url(new_store) -> str:
    """A store at the newest migration on SQLite and on PostgreSQL: what the
    judge makes of `database_url` at its start, without running the
    migrations again."""
    return new_store("judge")


@pytest.fixture
def harness(tmp_path: Path, migrated_database_url: str):
    from tests.harness import Harness

    h = Harness(tmp_path / "data", migrated_database_url)
    yield h
    h.close()


def pytest_collection_modifyitems(items) -> None:
    """The mark `postgresql` also on tests of PostgreSQL alone, and on the
    PostgreSQL half of a module's own parametrised store fixture."""
    mark = pytest.mark.postgresql
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "postgres_admin_url" in item.fixturenames or any(
                isinstance(v, str) and v == "postgresql" for v in params.values()):
            item.add_marker(mark)


# Real SMTP servers (aiosmtpd on loopback) for any test that asks for them.
from tests.conftest_smtp import smtp_server, smtp_server_factory, tls_files  # noqa: E402,F401
from tests.conftest_mail import mailrig  # noqa: E402,F401
