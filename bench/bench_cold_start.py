"""The first preference draw after installing (issue 29, point 4), in a fresh
virtualenv whose site-packages is read-only.

Run:  .venv/bin/python bench/bench_cold_start.py [--full-install] [--keep DIR]

It builds this repository's wheel, makes a fresh virtualenv and installs the
wheel into it (its dependencies are taken from the running virtualenv
through a .pth file, offline; --full-install installs them from PyPI as a
user would), makes that site-packages read-only (chmod a-w, and when run as
root the timed processes run as `nobody`, for whom it is really read-only:
the bench checks that a write there fails), and times, each in a fresh
process with a fresh data directory (wall clock, and the process's CPU
time):

* the anchors: `python -c pass`; the same draw in a warm process (the
  median of 20 after a first one: "later draws");
* the first draw of three games by `judge resolve`: 7 powers, realistic
  lists at 36 powers, and "anything but X" at 24 powers (a block too big to
  count: the sampler);
* `judge compile` (the one-off build of the kernels into the data
  directory's cache), then the same three draws again (kernels loaded from
  that cache where the command wants them);
* the way it was before: the same first draws with numba compiling at
  first use (the library's policy, a fresh NUMBA_CACHE_DIR: the only
  cache a read-only site-packages leaves).

Each first draw's result is checked equal across the three ways. Ratios
are against the anchors of the same run. Nothing is asserted beyond that.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.adversarial_cases import anything_but, power_names, texts  # noqa: E402

NOBODY = 65534


def games() -> dict[str, dict]:
    """The three games, as `judge resolve` files."""
    sys.path.insert(0, str(REPO / "bench"))
    from bench_preference import realistic_profile

    rnd = random.Random(29)
    profile = realistic_profile(rnd, 36)
    names = [f"Power{k:02d}" for k in range(36)]
    realistic = {pl: ("*" if p.random else " ".join(
        (f"[{' '.join(g)}]" if len(g) > 1 else g[0]) for g in p.groups)) for pl, p in profile.items()}
    seven = {"a": "FRIGATE", "b": "IGATEFR", "c": "ATEFRIG", "d": "EFRIGAT", "e": "EFGRIAT", "f": "FRAGIT",
             "g": "EAFGIRT"}
    return {
        "7 powers": {"method": "preference", "params": {"mode": "list"}, "submissions": seven},
        "36 powers, realistic lists": {"method": "preference", "powers": names, "params": {"mode": "both"},
                                       "submissions": realistic},
        "24 powers, anything but X (sampled)": {
            "method": "preference", "powers": power_names(24), "params": {"mode": "list"},
            "submissions": texts(anything_but(24, rnd=random.Random(0)), power_names(24))},
    }


def build_wheel(out: Path) -> Path:
    run = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(REPO)],
                             capture_output=True, text=True)
    wheels = sorted(out.glob("pbem_judge-*.whl"))
    if run.returncode != 0 or len(wheels) != 1:
        sys.exit(f"wheel build failed:\n{run.stdout}\n{run.stderr}")
    return wheels[0]


def make_venv(root: Path, wheel: Path, full: bool) -> Path:
    """The fresh virtualenv with the wheel installed; its site-packages."""
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    if not full:  # the dependencies from this virtualenv, offline
        (site / "zz_bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    args = [] if full else ["--no-deps"]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args, str(wheel)],
                   check=True)
    return site


def read_only(root: Path, site: Path) -> None:
    subprocess.run(["chmod", "-R", "a-w", str(site)], check=True)
    for folder in [root, *root.parents]:  # reachable by nobody
        if folder == Path("/"):
            break
        folder.chmod(folder.stat().st_mode | 0o055)


def as_user() -> dict:
    """Popen keywords that run a child as nobody when this runs as root."""
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def fresh_home(root: Path, name: str) -> Path:
    home = root / name
    home.mkdir()
    if os.geteuid() == 0:
        os.chown(home, NOBODY, NOBODY)
    return home


def timed(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, **as_user())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, run.stdout


_WARM = r"""
import json, statistics, sys, time
from pathlib import Path
from judge.methods.preference.solver import compiled
from judge.resolution import run_resolution
compiled.use(Path(sys.argv[2]), daemon=True)  # a daemon's process, its cache built
data = json.load(open(sys.argv[1]))
run_resolution(data, b"bench")
times = []
for k in range(20):
    t = time.perf_counter()
    run_resolution(data, k.to_bytes(4, "big"))
    times.append(time.perf_counter() - t)
print(statistics.median(times))
"""

_LIBRARY = r"""
import json, sys
from judge.resolution import run_resolution
print(json.dumps(run_resolution(json.load(open(sys.argv[1])), bytes.fromhex("00ff")), default=str))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full-install", action="store_true", help="install the dependencies from PyPI too")
    ap.add_argument("--keep", help="build in this folder and keep it (default: a temporary one, removed)")
    args = ap.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="judge-cold-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        run(root, args.full_install)
    finally:
        if not args.keep:
            subprocess.run(["chmod", "-R", "u+w", str(root)], check=False)
            shutil.rmtree(root, ignore_errors=True)


def run(root: Path, full: bool) -> None:
    wheel = build_wheel(root / "dist")
    site = make_venv(root, wheel, full)
    read_only(root, site)
    bindir = site.parents[2] / "bin"
    python, judge = str(bindir / "python"), str(bindir / "judge")
    base_env = {"PATH": f"{bindir}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    probe = subprocess.run([python, "-c", f"open({str(site / 'probe')!r}, 'w')"], capture_output=True, cwd=root,
                           env=base_env, **as_user())
    assert probe.returncode != 0, "site-packages is writable for the timed processes"
    where = subprocess.run([python, "-c", "import judge; print(judge.__file__)"], capture_output=True, text=True,
                           check=True, cwd=root, env=base_env, **as_user()).stdout.strip()
    assert where.startswith(str(site)), f"judge is imported from {where}, not the fresh virtualenv"
    files = root / "games"
    files.mkdir()
    for folder in (files,):
        folder.chmod(0o755)
    paths = {}
    for k, (name, data) in enumerate(games().items()):
        paths[name] = files / f"game{k}.json"
        paths[name].write_text(json.dumps(data))
        paths[name].chmod(0o644)

    def env_for(home: Path, **extra: str) -> dict:
        return {**base_env, "HOME": str(home), "JUDGE_DATA_DIR": str(home / "data"), **extra}

    print(f"Fresh virtualenv {site.parents[2]} ({'dependencies from PyPI' if full else 'dependencies by .pth'}),"
          f" site-packages read-only{' (processes run as nobody)' if os.geteuid() == 0 else ''}; wall seconds"
          " (CPU seconds)")
    home = fresh_home(root, "anchor")
    passes = [timed([python, "-c", "pass"], env_for(home), home) for _ in range(5)]
    anchor = statistics.median(w for w, _, _ in passes)
    print(f"\nAnchor: python -c pass {anchor:.3f} s (median of 5)")
    print("\n| game | later draws, in a warm process | first draw now (no compile) | x later |"
          " judge compile, once | first draw after judge compile | first draw before (numba compiles at first"
          " use) | now / before |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    compiled_home = fresh_home(root, "compiled")
    build = timed([judge, "compile"], env_for(compiled_home), compiled_home)
    for k, (name, path) in enumerate(paths.items()):
        later = float(timed([python, "-c", _WARM, str(path), str(compiled_home / "data")], env_for(compiled_home),
                            root)[2])
        cold_home = fresh_home(root, f"cold{k}")
        cold = timed([judge, "resolve", str(path), "--seed", "00ff"], env_for(cold_home), cold_home)
        after = timed([judge, "resolve", str(path), "--seed", "00ff"], env_for(compiled_home), compiled_home)
        old_home = fresh_home(root, f"old{k}")
        old = timed([python, "-c", _LIBRARY, str(path)], env_for(old_home, NUMBA_CACHE_DIR=str(old_home / "numba")),
                    old_home)
        results = [json.loads(x[2]) for x in (cold, after, old)]
        for r in results:
            r.pop("input", None)
            r.pop("seed", None)
        same = "" if results[0] == results[1] == results[2] else " RESULTS DIFFER"
        print(f"| {name} | {later:.3f} s | {cold[0]:.2f} s ({cold[1]:.2f}) | {cold[0] / later:.0f}x |"
              f" {build[0]:.1f} s ({build[1]:.1f}) | {after[0]:.2f} s ({after[1]:.2f}) |"
              f" {old[0]:.2f} s ({old[1]:.2f}) | {cold[0] / old[0]:.2f}{same} |")
    written = sorted(p.relative_to(site) for p in site.rglob("*.nbi"))
    print(f"\nnumba index files written into site-packages: {len(written)}; in the data directory's cache:"
          f" {len(list((compiled_home / 'data' / 'cache' / 'numba').rglob('*.nbi')))}")


if __name__ == "__main__":
    main()
