"""The solver's compiled kernels and their cache
(judge/methods/preference/solver/compiled.py, issue 29): a `judge` command
never compiles; it loads the kernels from the judge's own cache in its data
directory once `judge compile` (or `judge serve`, in the background) has
built it, and runs the same code in Python until then, with the same
results; the build compiles every signature the solver calls, so nothing
compiles later; a stale cache is not used, and the stamp that tells names
every source the kernels are compiled from.

The build compiles the kernels (some 20 s of CPU), once for this module.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adversarial_cases import anything_but, power_names, texts

JUDGE = str(Path(sys.executable).with_name("judge"))
ROOT = Path(__file__).resolve().parent.parent

# A game of 14 powers whose players all tie (one block of 14: the solver's
# kernel in a daemon) and one whose block no counting handles ("anything but
# X" at 24 powers: the sampler's kernels).
TIED = {"method": "preference", "powers": [f"Power{k:02d}" for k in range(14)], "params": {"mode": "list"},
        "submissions": {f"p{k:02d}": "" for k in range(14)}}
SAMPLED = {"method": "preference", "powers": power_names(24), "params": {"mode": "list"},
           "submissions": texts(anything_but(24, rnd=random.Random(0)), power_names(24))}

# Runs in a fresh interpreter: the kernel policy of a `judge` command (a
# daemon's when "daemon" is given), one resolve of each game, then what was
# imported and what numba compiled or loaded.
_PROBE = r"""
import json, sys
from pathlib import Path
from judge.methods.preference.solver import compiled
from judge.resolution import run_resolution
compiled.use(folder=Path(sys.argv[1]), daemon="daemon" in sys.argv[2:])
out = {"results": [run_resolution(json.loads(Path(f).read_text()), b"probe") for f in sys.argv[3:]]}
out["numba"] = "numba" in sys.modules
out["stats"] = {}
if out["numba"]:
    from judge.methods.preference.solver import sampler_kernel, solver_kernel
    for name in ("analyse", "optimum", "uncontested", "preference_round"):
        d = getattr(solver_kernel, name)
        out["stats"][name] = [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()), len(d.signatures)]
    for name in ("frontier", "paths", "node_bounds", "trials"):
        d = getattr(sampler_kernel, name)
        out["stats"][name] = [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()), len(d.signatures)]
print(json.dumps(out, default=str))
"""


def probe(folder: Path, daemon: bool, *games: Path) -> dict:
    run = subprocess.run([sys.executable, "-c", _PROBE, str(folder), "daemon" if daemon else "command",
                          *map(str, games)], capture_output=True, text=True, timeout=900, cwd=ROOT,
                         env={k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("games")
    out = {}
    for name, data in (("tied", TIED), ("sampled", SAMPLED)):
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(data))
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A data directory whose kernel cache `judge compile` built."""
    data = tmp_path_factory.mktemp("built")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "JUDGE_CONFIG")}
    run = subprocess.run([JUDGE, "--data-dir", str(data), "compile"], capture_output=True, text=True, timeout=1800,
                         env=env)
    assert run.returncode == 0, run.stderr
    assert "compiled into" in run.stdout
    again = subprocess.run([JUDGE, "--data-dir", str(data), "compile"], capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "compiled already" in again.stdout
    return data


@pytest.mark.slow
def test_without_the_cache_nothing_compiles_and_the_results_are_the_same(tmp_path, games):
    """A command (and a daemon) whose cache is empty runs the Python code:
    numba is never imported, let alone compiling; and resolves each game as
    the library does with its kernels compiled."""
    cold = probe(tmp_path / "empty", True, games["tied"], games["sampled"])
    assert cold["numba"] is False
    assert not (tmp_path / "empty").exists()  # nothing was written either
    from judge.resolution import run_resolution

    library = [run_resolution(json.loads(games[g].read_text()), b"probe") for g in ("tied", "sampled")]
    assert json.loads(json.dumps(library, default=str)) == cold["results"]
    assert cold["results"][1]["exact"] is False  # the sampler drew it


@pytest.mark.slow
def test_a_built_cache_is_loaded_and_nothing_compiles_again(built, games):
    """After `judge compile`, a daemon loads every kernel it calls from the
    cache (hits, no miss), one signature each, with the same results; a
    one-shot command loads only the sampler's (the solver's kernel is not
    worth numba's import to a process that resolves one game)."""
    folder = built / "cache" / "numba"
    daemon = probe(folder, True, games["tied"], games["sampled"])
    assert daemon["numba"] is True
    used = {name: s for name, s in daemon["stats"].items() if s[0] or s[1]}
    # (a default preference round makes one compiled call: preference_round)
    assert set(used) == {"preference_round", "frontier", "paths", "node_bounds", "trials"}, daemon["stats"]
    for name, (hits, misses, signatures) in used.items():
        assert hits == 1 and misses == 0 and signatures == 1, (name, hits, misses, signatures)
    command = probe(folder, False, games["tied"], games["sampled"])
    assert {name for name, s in command["stats"].items() if s[0] or s[1]} == {"frontier", "paths", "node_bounds",
                                                                              "trials"}
    cold = probe(folder.parent / "other", True, games["tied"], games["sampled"])
    assert daemon["results"] == command["results"] == cold["results"]


@pytest.mark.slow
def test_a_stale_cache_is_not_used(built, games, tmp_path):
    """The stamp names the sources numba compiled: a cache built from other
    sources (an upgrade) is left alone until it is built again."""
    import shutil

    folder = tmp_path / "numba"
    shutil.copytree(built / "cache" / "numba", folder)
    stamp = json.loads((folder / "judge-kernels.json").read_text())
    source = next(iter(stamp["sources"]))
    stamp["sources"][source][0] -= 1  # the source is newer than the build
    (folder / "judge-kernels.json").write_text(json.dumps(stamp))
    assert probe(folder, True, games["tied"])["numba"] is False


@pytest.mark.slow
def test_no_later_solve_adds_a_signature(built):
    """The build compiled every kernel with the argument types the solver
    passes: realistic and adversarial games of 12 to 40 powers, duplex and
    shortcut rounds, sampled blocks, bonus tables and comparisons add no
    signature (a signature numba has not compiled would be compiled on a
    player's way)."""
    code = r"""
import json, random, sys
from pathlib import Path
from judge.methods.preference.solver import compiled, sampler_kernel, solver_kernel
from judge.methods.preference import engine
from judge.rng import DrawStream
from judge.variants import make_power_list
from tests.adversarial_cases import SHAPES, power_names
from tests.test_preference_replay import _genome_lists, replay_games
compiled.use(folder=Path(sys.argv[1]), daemon=True)
games = [g for g in replay_games() if len(g[1]) >= 12]
for n in (12, 20, 40):
    for shape, make in SHAPES.items():
        names = power_names(n)
        games.append((shape, names, engine.Params(), _genome_lists(make(n, random.Random(n)), names)))
for name, names, params, lists in games:
    try:
        engine.resolve(make_power_list(names), params, lists, DrawStream(name.encode()))
    except Exception as err:
        if type(err).__name__ != "TooHard":
            raise
kernels = [getattr(solver_kernel, k) for k in ("analyse", "optimum", "uncontested", "preference_round")]
kernels += [getattr(sampler_kernel, k) for k in ("frontier", "paths", "node_bounds", "trials")]
print(json.dumps([[k.__name__, len(k.signatures), sum(k.stats.cache_misses.values())] for k in kernels]))
"""
    run = subprocess.run([sys.executable, "-c", code, str(built / "cache" / "numba")], capture_output=True, text=True,
                         timeout=1800, cwd=ROOT, env={k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
    assert run.returncode == 0, run.stderr
    for name, signatures, misses in json.loads(run.stdout.strip().splitlines()[-1]):
        assert signatures == 1 and misses == 0, (name, signatures, misses)


@pytest.mark.slow
def test_serve_builds_the_cache_in_the_background_and_stops_it_with_itself(tmp_path):
    """`judge serve` on a data directory without the kernels starts their
    build in a child process (the daemon runs mail meanwhile), and a
    SIGTERM stops both."""
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                      f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n')
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "JUDGE_KERNEL_BUILD")}
    env.update(JUDGE_CONFIG=str(config), PYTHONUNBUFFERED="1")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([JUDGE, "serve"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env)
    try:
        deadline = time.monotonic() + 60
        while b"judge: running" not in log.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        text = log.read_text()
        assert f"compiling the solver's kernels into {tmp_path / 'data' / 'cache' / 'numba'}" in text, text
        child = int(text.split("in the background (pid ")[1].split(")")[0])
        assert "judge.methods.preference.solver.kernel_build" in Path(f"/proc/{child}/cmdline").read_bytes().decode()

        def nice() -> int:
            return int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[16])

        while nice() != 19:  # the child lowers its own priority first thing
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    assert log.read_text().rstrip().endswith("judge: stopped")


def test_a_command_resolves_36_powers_without_numba_or_scipy(tmp_path):
    """The first draw of a big game in a `judge resolve` (or a deliver)
    before the cache is built: neither numba nor scipy is imported (their
    imports would cost it 0.3-1 s each); the small tables' Hungarian method
    in Python finds the optimum."""
    names = [f"Power{k:02d}" for k in range(36)]
    rnd = random.Random(36)
    lists = {f"p{k:02d}": " ".join(rnd.sample(names, rnd.randint(1, 36))) for k in range(36)}
    game = tmp_path / "g.json"
    game.write_text(json.dumps({"method": "preference", "powers": names, "params": {"mode": "list"},
                                "submissions": lists}))
    code = ("import json, sys\nfrom judge.cli import main\ntry:\n    main(sys.argv[1:], prog_name='judge')\n"
            "except SystemExit as end:\n    assert not end.code\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'numba', 'scipy'})))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    run = subprocess.run([sys.executable, "-c", code, "--data-dir", str(tmp_path / "data"), "resolve", str(game),
                          "--seed", "00ff"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
    assert '"assignment"' in run.stdout


@pytest.mark.slow
def test_deliver_that_fills_a_game_resolves_it_without_numba(tmp_path):
    """`judge deliver` with no daemon runs the mail that takes a game's last
    seat, and so resolves the game (24 powers, "anything but X": a block
    too big to count, the sampler's case) before its kernels are built:
    without importing numba, nor writing a cache."""
    from tests.harness import make_mail
    from tests.test_startup import imported_by

    names = power_names(24)
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                      f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n\n'
                      f'[variants.big]\npowers = {json.dumps(names)}\n')
    env = {"PATH": "/usr/bin:/bin", "JUDGE_CONFIG": str(config), "HOME": str(tmp_path)}

    def deliver(sender: str, body: str, *args: str) -> None:
        run = subprocess.run([JUDGE, "deliver", *args], input=make_mail(sender, body), capture_output=True,
                             env=env, timeout=300)
        assert run.returncode == 0, run.stderr.decode()

    deliver("gm@example.test", "CREATE ?g gmpw preference big")
    lists = list(texts(anything_but(24, rnd=random.Random(0)), names).values())
    for k, text in enumerate(lists[:-1]):  # stored only: the last deliver runs them all
        deliver(f"p{k}@example.test", f"SIGNON ?g pw{k}\nSET PREFERENCE {text}", "--no-process")
    loaded = imported_by("deliver", stdin=make_mail("p23@example.test", f"SIGNON ?g pw23\nSET PREFERENCE {lists[-1]}"),
                         env=env)
    assert "numba" not in loaded, loaded
    import sqlite3

    with sqlite3.connect(tmp_path / "j.sqlite3") as db:
        (result,), = db.execute("SELECT result FROM resolutions").fetchall()
    result = json.loads(result)
    assert len(result["assignment"]) == 24 and result["exact"] is False  # drawn by the sampler
    assert not (tmp_path / "data" / "cache" / "numba").exists()  # (DATA/cache keeps Lark's parsers too)


@pytest.fixture
def policy(monkeypatch):
    """compiled's process-wide state and numba's cache folder, put back."""
    from judge.methods.preference.solver import compiled

    monkeypatch.setattr(compiled, "_state", dict(compiled._state))
    saved = os.environ.get("NUMBA_CACHE_DIR")
    numba = sys.modules.get("numba")
    folder = numba.config.CACHE_DIR if numba else None
    os.environ.pop("NUMBA_CACHE_DIR", None)
    yield compiled
    os.environ.pop("NUMBA_CACHE_DIR", None)
    if saved is not None:
        os.environ["NUMBA_CACHE_DIR"] = saved
    if numba:
        numba.config.CACHE_DIR = folder


def test_the_stamp_is_read_once_and_again_after_a_build(tmp_path, monkeypatch, policy):
    compiled = policy
    reads = []
    monkeypatch.setattr(compiled, "_stamp_matches", lambda folder: reads.append(folder) or len(reads) > 1)
    compiled.use(tmp_path, daemon=True)
    assert compiled.cache_dir() == tmp_path / "cache" / "numba"
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "cache" / "numba")
    assert not compiled.allowed() and not compiled.allowed("solver")
    assert len(reads) == 1
    compiled.refresh()
    assert compiled.allowed() and compiled.allowed("solver") and len(reads) == 2
    compiled.use(tmp_path)  # a one-shot command: the sampler's kernels only
    assert compiled.allowed() and not compiled.allowed("solver")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))  # an operator's own folder wins
    assert compiled.cache_dir() == tmp_path / "mine"


def test_a_command_run_inside_another_program_leaves_the_policy_as_it_was(tmp_path, policy):
    """click's test runner runs `judge` commands inside the test process:
    each command uses the judge's cache for its own time only, so the tests
    after it still compile at first need, into numba's own cache."""
    from click.testing import CliRunner

    from judge.cli import main

    compiled = policy
    before = dict(compiled._state)
    game = tmp_path / "g.json"
    game.write_text(json.dumps(SAMPLED))  # a block too big to count: the command looks for its cache
    result = CliRunner().invoke(main, ["--data-dir", str(tmp_path / "data"), "resolve", str(game), "--seed", "00ff"])
    assert result.exit_code == 0, result.output
    assert compiled._state == before and "NUMBA_CACHE_DIR" not in os.environ
    assert compiled.allowed("solver")


def test_the_stamp_names_every_source_the_kernels_are_compiled_from():
    """numba's cache index checks the file of each compiled function only,
    and compiles the value of every constant a kernel reads into its
    machine code: the stamp names each file a kernel is compiled from, the
    files that define those constants and sampler_kernel.py (how they are
    compiled), and no other, so that a changed source makes the cache
    stale."""
    pytest.importorskip("numba")
    import ast
    import inspect

    import numpy as np

    from judge.methods.preference.solver import compiled, sampler_kernel, solver_kernel

    dispatchers = [d for d in vars(solver_kernel).values() if hasattr(d, "py_func")]
    dispatchers += list(sampler_kernel._compiled.values())
    assert len(dispatchers) == 13 + 18
    files = {Path(inspect.getfile(d.py_func)).resolve() for d in dispatchers}
    stamped = {Path(name) for name in compiled._sources()}
    assert stamped == files | {Path(sampler_kernel.__file__).resolve()}
    defined = set()
    for path in stamped:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign):  # (NAME = ... and A, B = ...)
                defined |= {name.id for target in node.targets for name in ast.walk(target)
                            if isinstance(name, ast.Name)}
    constants = 0
    for d in dispatchers:
        for name in d.py_func.__code__.co_names:
            value = d.py_func.__globals__.get(name)
            if isinstance(value, (int, float, np.generic)) and not isinstance(value, bool):
                assert name in defined, (d.py_func.__name__, name)
                constants += 1
    assert constants > 10  # (the step constants of the sampler, the kernel's statuses)
