"""Names that look alike, without ICU (issue 25, point 9): the UTS #39
skeleton from Unicode's own confusables.txt (shipped in judge/data/) and
Python's unicodedata, so that `pip install` needs no compiler.
tests/security/test_names_forged_lines.py tests the refusals at SIGNON and
REPLACE that use it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from judge.names import CONFUSABLES, looks_like, skeleton, skeleton_keys

REPO = Path(__file__).resolve().parent.parent


def test_the_table_is_unicodes_confusables_file():
    head = CONFUSABLES.read_text(encoding="utf-8-sig").splitlines()[:12]
    assert head[0] == "# confusables.txt" and "# Unicode Security Mechanisms for UTS #39" in head
    assert any(line.startswith("# Version: ") for line in head)
    assert (CONFUSABLES.parent / "UNICODE-LICENSE.txt").exists()


def test_skeletons_as_uts39_defines_them():
    # Its own examples and the letters an impostor picks.
    assert skeleton("\U0001d52d\U0001d4b6\u1eff\U0001d561\U0001d552\u2113") == skeleton("paypal")
    assert skeleton("\u0410lice") == skeleton("Alice") == skeleton("\u0391lice")  # Cyrillic, Greek capital A
    assert skeleton("paypaI") == skeleton("paypal")  # capital I looks like small l
    assert skeleton("rn") == skeleton("m")
    # Invisible characters are dropped, and NFD makes composed and decomposed one.
    assert skeleton("Al\u200bi\u00adce\ufe0f") == skeleton("Alice")
    assert skeleton("Jos\u00e9") == skeleton("Jose\u0301")
    assert skeleton("Alina") != skeleton("Alice") and skeleton("Bob") != skeleton("Bobby")


def test_case_is_ignored_and_names_apart_stay_apart():
    others = [("Alice", "alice"), ("Zoë", "zoe")]
    assert looks_like("ALICE", others) == "alice" and looks_like("zoe\u0308", others) == "zoe"
    assert looks_like("Zoe", others) is None and looks_like("Alicia", others) is None
    assert skeleton_keys("paypaI") & skeleton_keys("PAYPAL")


def test_no_icu_and_no_compiler():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in deps if d.lower().startswith("pyicu")]
    code = "import sys; from judge.names import looks_like; looks_like('A', [('B', 1)]); print('icu' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert run.stdout.strip() == "False", run.stderr
