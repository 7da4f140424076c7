"""Start-up: a command imports only what it uses (issue 12).

Which modules a command leaves in sys.modules is behaviour, not timing: a
heavy import coming back (SQLAlchemy on the offline resolver's path, scipy or
numba on a Blind Auction's or on a mail's) fails here. bench/bench_startup.py
measures the times themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.methods import METHODS
from judge.resolution import RESOLVERS
from judge.resources import data_dir
from tests.harness import make_mail

# (lark, the command parser: deliver beside the daemon parses no command.)
# (starlette, uvicorn, feedgen: the web, only for `judge web` and `judge serve --web`.)
HEAVY = ("sqlalchemy", "alembic", "scipy", "numba", "numpy", "jinja2", "lark", "starlette", "uvicorn", "feedgen")
# Runs `judge ARGS...` in a fresh interpreter, then prints which heavy
# packages it imported (a command's exit is caught: its modules stay).
_PROBE = """
import json, sys
from judge.cli import main
try:
    main(sys.argv[1:], prog_name="judge")
except SystemExit as end:
    if end.code:
        raise
print("\\nMODULES " + json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(%r))))
""" % (HEAVY,)


def imported_by(*args: str, stdin: bytes | None = None, env: dict | None = None) -> set[str]:
    run = subprocess.run([sys.executable, "-c", _PROBE, *args], input=stdin, capture_output=True, env=env)
    assert run.returncode == 0, run.stderr.decode()
    last = run.stdout.decode().rstrip().rsplit("\n", 1)[-1]
    assert last.startswith("MODULES "), run.stdout.decode()
    return set(json.loads(last[len("MODULES "):]))


def _write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "resolve.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_blind_auction_resolve_needs_no_store_no_solver_no_templates(tmp_path):
    path = _write(tmp_path, {"method": "blind-auction", "submissions": {
        "a": "A 40, E 30, F 20, G 18, I 14, R 12, T 6", "b": "No Preference"}})
    # (Its bid lists are read with the command grammar, lark.)
    assert imported_by("resolve", path, "--seed", "00ff") <= {"lark"}


def test_preference_resolve_needs_no_store(tmp_path):
    path = _write(tmp_path, {"method": "preference", "submissions": {
        "a": "FRIGATE", "b": "EGTRAFI", "c": "ITAGERF", "d": "RAGITEF", "e": "TAIGREF", "f": "GEFARIT",
        "g": "AIGTERF"}})
    loaded = imported_by("resolve", path, "--seed", "00ff")
    assert "sqlalchemy" not in loaded and "alembic" not in loaded
    # Nor the big solvers: seven players are solved without scipy
    # (linear_assignment.SMALL_LSA) and without numba (COMPILED_FROM).
    assert not loaded & {"scipy", "numba"}, loaded
    # The text output renders its templates (the probe sees what a command
    # imports as it runs), still without the store.
    loaded = imported_by("resolve", path, "--seed", "00ff", "--format", "text")
    assert "jinja2" in loaded and "sqlalchemy" not in loaded


def test_deliver_of_a_player_mail_loads_no_solver_and_no_migrations(tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                      f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n')
    env = {"PATH": "/usr/bin:/bin", "JUDGE_CONFIG": str(config), "HOME": str(tmp_path)}
    # The first mail makes the database: its migrations run (alembic).
    first = imported_by("deliver", stdin=make_mail("gm@example.test", "CREATE ?g gmpw preference\nSET MANUAL START"),
                        env=env)
    assert "alembic" in first
    imported_by("deliver", stdin=make_mail("p@example.test", "SIGNON ?g pw"), env=env)
    # An ordinary mail: a player of a preference game sends a list.
    loaded = imported_by("deliver", stdin=make_mail("p@example.test", "SIGNON ?g pw\nSET PREFERENCE FRIGATE"),
                         env=env)
    assert not loaded & {"scipy", "numba", "numpy", "alembic"}, loaded
    log = subprocess.run([sys.executable, "-m", "judge", "log", "g"], capture_output=True, text=True, env=env)
    assert "SET PREFERENCE FRIGATE" in log.stdout and "-> " in log.stdout


def test_deliver_beside_the_daemon_stores_without_sqlalchemy(tmp_path):
    """The production case: the daemon runs on the store, and deliver only
    stores the mail (sqlite3, no SQLAlchemy, no ORM) and wakes it: nothing of
    the store's models, the command parser, the templates or the solvers."""
    from tests.test_deliver_daemon import serving, write_config

    env = write_config(tmp_path)
    with serving(env, tmp_path / "serve.log"):
        loaded = imported_by("deliver", stdin=make_mail("p@example.test", "SIGNON ?g pw\nSET PREFERENCE FRIGATE"),
                             env=env)
    assert not loaded, loaded
    # Stored only (--no-process, no daemon): the same light path.
    loaded = imported_by("deliver", "--no-process", stdin=make_mail("p@example.test", "LIST"), env=env)
    assert not loaded, loaded


def test_help_lists_every_subcommand_with_its_summary():
    out = CliRunner().invoke(main, ["--help"]).output
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == {"blind", "compile", "deliver", "games", "log", "lui", "migrate", "moderator", "outbox", "pt3",
                      "quarantine", "resolve", "serve", "thirdparty", "unlock", "unstick", "verify", "web"}
    assert "Blinding: get a random power" in out  # a lazily loaded command's own help line
    assert "Lift the password lock" in out


def test_a_lazily_loaded_subcommand_runs():
    result = CliRunner().invoke(main, ["blind", "add", "123", "456"])
    assert result.exit_code == 0 and result.output.strip() == "579"


def test_method_table_names_agree_with_the_modules():
    assert {name: METHODS[name].NAME for name in METHODS} == {name: name for name in METHODS}


def test_every_offline_resolver_has_its_result_templates():
    folders = {name: method.RESULTS for name, method in METHODS.items() if method.RESULTS}
    assert set(folders) == set(RESOLVERS)
    for folder in folders.values():
        assert (data_dir("templates") / folder / "offline.txt.j2").is_file()


@pytest.mark.parametrize("method", sorted(RESOLVERS))
def test_resolver_modules_import(method):
    import importlib

    assert callable(importlib.import_module(RESOLVERS[method]).resolve)


def test_the_store_finds_the_head_migration_as_alembic_does(tmp_path):
    from alembic import command
    from alembic.script import ScriptDirectory

    from judge.store.db import alembic_config, current_revisions, head_revisions, make_engine, upgrade

    engine = make_engine(f"sqlite:///{tmp_path / 'j.sqlite3'}")
    assert head_revisions() == set(ScriptDirectory.from_config(alembic_config(engine)).get_heads())
    assert current_revisions(engine) == set()
    upgrade(engine)
    assert current_revisions(engine) == head_revisions()
    # A store one migration behind is still brought up to date.
    command.downgrade(alembic_config(engine), "-1")
    assert current_revisions(engine) != head_revisions()
    upgrade(engine)
    assert current_revisions(engine) == head_revisions()
