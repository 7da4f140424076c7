"""Packaging and deployment: the wheel, the installed `judge` command, the
example configuration and the command line's exit statuses.

The wheel test builds the wheel from this repository, installs it into a
fresh virtualenv and runs the installed `judge` from a folder outside the
repository, so the grammar and the templates must come from the wheel.
It needs PyPI (the fresh venv installs the dependencies) and takes a minute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import re
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from judge.config import _KNOWN, check_methods, load_config
from judge.variants import variant_powers

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "deploy" / "judge.example.toml"
SUBCOMMANDS = ("serve", "deliver", "resolve", "games", "log", "migrate")
STANDARD = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]

# A 7-power, 7-player Blind Auction: bids in the accepted spellings, one
# No Preference, one list that breaks the rules (erin: total 145, equal bids).
# alice and carol bid the same, and dave's 40 ties their 40: whatever the
# seed, step 3 draws between Austria and Germany.
AUCTION = {
    "method": "blind-auction",
    "powers": STANDARD,
    "params": {"T": 140, "M": 70, "D": 1},
    "submissions": {
        "alice": "Austria: 40\nEngland: 30\nFrance: 25\nGermany: 20\nItaly: 12\nRussia: 8\nTurkey: 5",
        "bob": "No Preference",
        "carol": "A 40, E 30, F 25, G 20, I 12, R 8, T 5",
        "dave": "aus 10; eng 20; fra 30; ger 40; ita 15; rus 16; tur 9",
        "erin": "Austria 70\nEngland 70\nFrance 1\nGermany 1\nItaly 1\nRussia 1\nTurkey 1",
        "frank": "Turkey=60, Russia=50, Italy=10, Germany=5, France=4, England=3, Austria=2",
        "grace": "Italy 50\nRussia 30\nTurkey 20\nGermany 15\nFrance 10\nEngland 5\nAustria 3",
    },
}


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that points the judge at a config,
    a data directory or this repository's sources."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("JUDGE_CONFIG", "JUDGE_DATA_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _judge_cmd() -> list[str]:
    """The `judge` script of the environment running the tests."""
    script = Path(sys.executable).parent / "judge"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from judge.cli import main; sys.argv[0] = 'judge'; main()"]


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


# -- the wheel -----------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    res = _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
               cwd=REPO, timeout=300)
    if res.returncode != 0:  # e.g. `build` cannot make its isolated env: let pip try
        res = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(REPO)],
                   cwd=REPO, timeout=300)
    wheels = sorted(out.glob("pbem_judge-*.whl"))
    assert res.returncode == 0 and len(wheels) == 1, f"wheel build failed:\n{res.stdout}\n{res.stderr}"
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed; its bin/ folder."""
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    bindir = env_dir / "bin"
    res = _run([str(bindir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                str(wheel)], cwd=env_dir, timeout=600)
    assert res.returncode == 0, f"pip install of the wheel failed:\n{res.stdout}\n{res.stderr}"
    assert (bindir / "judge").exists()
    return bindir


@pytest.mark.slow
def test_wheel_ships_grammar_and_templates(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "judge/grammars/commands.lark" in names
    templates = [p.relative_to(REPO / "templates").as_posix()
                 for p in (REPO / "templates").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert templates, "no templates in the repository?"
    missing = [t for t in templates if f"judge/templates/{t}" not in names]
    assert not missing, f"templates missing from the wheel: {missing}"
    assert "judge/cli.py" in names and "judge/resources.py" in names


@pytest.mark.slow
def test_installed_judge_help_lists_subcommands(installed, tmp_path):
    res = _run([str(installed / "judge"), "--help"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    for name in SUBCOMMANDS:
        assert f"  {name} " in res.stdout, f"{name} missing from judge --help:\n{res.stdout}"


@pytest.mark.slow
def test_installed_judge_resolves_outside_the_repo(installed, tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    assert REPO not in work.parents
    src = work / "auction.json"
    src.write_text(json.dumps(AUCTION, indent=1), encoding="utf-8")
    env = _clean_env(HOME=str(work))

    # The data folders are the wheel's copies, not the repository's.
    where = _run([str(installed / "python"), "-c",
                  "from judge.resources import data_dir; print(data_dir('grammars')); print(data_dir('templates'))"],
                 cwd=work, env=env)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():
        assert Path(line).is_relative_to(installed.parent), line

    judge = str(installed / "judge")
    res = _run([judge, "resolve", str(src), "--seed", "00ff", "--format", "json"], cwd=work, env=env)
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["seed"] == "00ff"
    assignment = result["assignment"]
    assert sorted(assignment) == sorted(AUCTION["submissions"])
    assert sorted(assignment.values()) == STANDARD  # 7 players, 7 distinct powers
    assert set(result["rejected"]) == {"erin"}
    assert "bob" in result["no_preference"] and "erin" in result["no_preference"]
    assert result["draws"], "the 40-40 tie must be drawn"
    for d in result["draws"]:
        assert {"what", "options", "chosen", "counter"} <= set(d)
    # The same file and seed give the same result.
    again = _run([judge, "resolve", str(src), "--seed", "00ff", "--format", "json"], cwd=work, env=env)
    assert json.loads(again.stdout) == result

    text = _run([judge, "resolve", str(src), "--seed", "00ff", "--format", "text"], cwd=work, env=env)
    assert text.returncode == 0, text.stderr
    assert "Assignment" in text.stdout
    for player, power in assignment.items():
        assert player in text.stdout and power in text.stdout
    assert "erin" in text.stdout

    bb = _run([judge, "resolve", str(src), "--seed", "00ff", "--format", "bbcode"], cwd=work, env=env)
    assert bb.returncode == 0, bb.stderr
    assert "[b]" in bb.stdout and "[/table]" in bb.stdout
    for player, power in assignment.items():
        assert player in bb.stdout and power in bb.stdout


# -- the example configuration ---------------------------------------------------

def test_example_config_loads(tmp_path):
    config = load_config(EXAMPLE, data_dir=tmp_path)
    assert config.data_dir == tmp_path.resolve()
    assert config.database_url == f"sqlite:///{tmp_path.resolve() / 'judge.sqlite3'}"
    assert config.inbox_path == tmp_path.resolve() / "inbox"
    assert config.outbox_path == tmp_path.resolve() / "outbox"
    pentagon = variant_powers("pentagon", config.variants)
    assert len(pentagon) == 5
    assert [p.letter for p in pentagon] == ["A", "S", "Y", "C", "T"]
    check_methods(config)  # the [methods.lui] example is a usable LUI setting
    assert config.method_defaults["lui"]["prizes"]["Z"] == [3, 1]


# Sections that switch a feature on are shown commented out in the example.
COMMENTED_OUT = {"forum"}


def test_example_config_shows_every_option():
    text = EXAMPLE.read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    assert set(raw) == set(_KNOWN) - COMMENTED_OUT
    for section in COMMENTED_OUT:
        block = text.split(f"# [{section}]", 1)[1].split("\n[", 1)[0]
        settings = [line[2:] for line in block.splitlines() if re.match(r"# \w+ = ", line)]
        uncommented = tomllib.loads("\n".join(settings))
        assert set(uncommented) == _KNOWN[section], f"[{section}] (commented out) of the example config"
    for section, options in _KNOWN.items():
        if options is not None and section not in COMMENTED_OUT:
            assert set(raw[section]) == options, f"[{section}] of the example config"


# -- the command line -------------------------------------------------------------

@pytest.mark.parametrize("body, option", [
    ('[judge]\naddress = "judge@example.org"\ncolour = "blue"\n', "colour"),
    ('[smtp]\nport = "twenty-five"\n', "port"),
    ('[outbox]\ntransport = "pigeon"\n', "transport"),
])
def test_serve_refuses_a_bad_config_with_status_2(tmp_path, body, option):
    cfg = tmp_path / "judge.toml"
    cfg.write_text(body, encoding="utf-8")
    res = _run([*_judge_cmd(), "--config", str(cfg), "--data-dir", str(tmp_path / "data"), "serve"],
               cwd=tmp_path, timeout=60)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert option in res.stderr
    assert "configuration error" in res.stderr


def test_serve_once_on_the_default_config_creates_the_data_dir(tmp_path):
    data = tmp_path / "data"
    res = _run([*_judge_cmd(), "--data-dir", str(data), "serve", "--once"], cwd=tmp_path,
               env=_clean_env(HOME=str(tmp_path)), timeout=60)
    assert res.returncode == 0, res.stderr
    assert str(data) in res.stdout
    assert (data / "judge.sqlite3").is_file()
    for box in ("inbox", "outbox"):
        for sub in ("new", "cur", "tmp"):
            assert (data / box / sub).is_dir(), f"{box}/{sub}"
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["stored"] == 0 and summary["processed"] == 0


def test_data_dir_from_the_environment(tmp_path):
    data = tmp_path / "from-env"
    res = _run([*_judge_cmd(), "serve", "--once"], cwd=tmp_path,
               env=_clean_env(HOME=str(tmp_path), JUDGE_DATA_DIR=str(data)), timeout=60)
    assert res.returncode == 0, res.stderr
    assert f"data directory {data}" in res.stdout
    assert (data / "judge.sqlite3").is_file()
