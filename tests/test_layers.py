"""The layers' rules (docs/architecture.md, "The layers"), checked by
import-linter with the contracts of pyproject.toml ([tool.importlinter]):
the core imports nothing of the shell, a method imports no other method and
nothing of the shell but the API, a channel no configuration, no cycles
inside the packages. The tool reads the source (imports inside functions
too), so it runs in a process of its own on the tree it is pointed at."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ("The core (the methods' API and every engine) imports nothing of the shell",
             "A method imports no other method",
             "A method imports nothing of the shell but the API and the shared pure modules",
             "A mail channel imports no configuration module",
             "No import cycles inside the methods, channels, mail, driver, store, syntax, web and resolution packages")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports on the package `judge` found in `root`, with this
    checkout's contracts."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _status(output: str, contract: str) -> str:
    """KEPT or BROKEN, as the report's summary line of `contract` says."""
    joined = " ".join(output.split())  # the report wraps long names
    start = joined.index(contract) + len(contract)
    return next(word for word in joined[start:].split() if word in ("KEPT", "BROKEN"))


def test_the_layers_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    for contract in CONTRACTS:
        assert _status(result.stdout, contract) == "KEPT"
    assert "0 broken" in result.stdout


def _copy_of_the_package(dest: Path) -> Path:
    """The judge package's Python modules, copied to `dest` (the tree the
    tool reads; the checkout stays as it is)."""
    shutil.copytree(ROOT / "judge", dest / "judge", ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or (not n.endswith(".py") and not (Path(folder) / n).is_dir())])
    return dest


def _plant(root: Path, module: str, line: str) -> None:
    path = root / module
    path.write_text(path.read_text() + f"\n\ndef _planted():\n    {line}\n")


def test_a_forbidden_import_breaks_its_contract(tmp_path):
    """Three imports a newcomer might write, each inside a function (where
    an import is easiest to overlook), in a copy of the package: each breaks
    its contract (the engine's store import breaks two: the core's, and its
    method's), and the cycles' contract stays kept."""
    root = _copy_of_the_package(tmp_path)
    assert lint_imports(root).returncode == 0  # the copy itself is clean
    _plant(root, "judge/methods/lui/engine.py", "import judge.store.models")  # an engine reads the store
    _plant(root, "judge/methods/pt3/replay.py", "from judge.methods.payola import engine")  # a method another's
    _plant(root, "judge/transports/maildir/__init__.py", "from judge.config import Config")  # a channel the config
    result = lint_imports(root)
    out = " ".join(result.stdout.split())
    assert result.returncode == 1, result.stdout + result.stderr
    assert _status(result.stdout, CONTRACTS[0]) == "BROKEN"
    assert _status(result.stdout, CONTRACTS[1]) == "BROKEN"
    assert _status(result.stdout, CONTRACTS[2]) == "BROKEN"
    assert _status(result.stdout, CONTRACTS[3]) == "BROKEN"
    assert _status(result.stdout, CONTRACTS[4]) == "KEPT"
    assert "judge.methods.lui.engine -> judge.store.models" in out
    assert "judge.methods.pt3.replay -> judge.methods.payola" in out
    assert "judge.transports.maildir -> judge.config" in out
    assert "1 kept, 4 broken" in out
