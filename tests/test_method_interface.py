"""The method interface (issue 13, first part): every method is a package
found through the registry, the shell names none, and a method that is no
assignment (commands in, a timer out) runs through the shell unchanged."""

from __future__ import annotations

import ast
import importlib
import re
from datetime import timedelta
from pathlib import Path

import click
import pytest

from judge.games import find_game
from judge.methods import METHODS, get_method
from judge.methods import registry
from judge.methods.interface import Method
from judge.resources import data_dir

JUDGE = Path(__file__).resolve().parent.parent / "judge"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_is_a_package_with_its_parts(name):
    method = METHODS[name]
    assert isinstance(method, Method) and method.NAME == name
    assert registry.PACKAGES[name].startswith("judge.methods.")
    engine = method.engine()
    assert engine.NAME == name and engine.__name__.startswith(registry.PACKAGES[name] + ".")
    assert method.params_from(engine.default_params(7).as_dict(), 7) == engine.default_params(7)
    if method.REPLAY is not None:
        assert callable(importlib.import_module(method.REPLAY).resolve)
        assert method.RESULTS is not None
    if method.RESULTS is not None:
        for template in ("player.txt.j2", "master.txt.j2", "forum.bbcode.j2", "offline.txt.j2"):
            assert (data_dir("templates") / method.RESULTS / template).is_file()
        if method.ASSIGNMENT is not None:
            # judge.games.resolve_game renders it once for all of a game's mails.
            assert (data_dir("templates") / method.RESULTS / "results.txt.j2").is_file()
    for module in method.COMMANDS:
        importlib.import_module(module)
    assert (data_dir("templates") / "help" / f"{name}.txt.j2").is_file()
    for alias in method.ALIASES:
        assert get_method(alias) is method


# A method's name in the shell: a comparison with a game's or record's
# method, or a method's name as a literal.
_NAMED = re.compile(r"""\bmethod\s*(==|!=|\bin\b|\bnot in\b)|["'](blind-auction|preference|random|blind-random)["']""")
# The few literals that are no test of a method: a setting's default, the
# resolver file's default method, the preference modes' names.
_ALLOWED = {("config.py", '"preference"'), ("resolution/__init__.py", '"blind-auction"'),
            ("syntax/parser.py", '"random"')}


def test_the_shell_never_names_a_method():
    own = {importlib.import_module(m).__file__ for n in METHODS for m in METHODS[n].COMMANDS}
    found = []
    for path in sorted(JUDGE.rglob("*.py")):
        rel = path.relative_to(JUDGE).as_posix()
        if rel.startswith("methods/") or str(path) in own or rel.startswith("mail/"):
            continue  # the methods themselves, their own commands; mail/: DKIM and SPF "methods"
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in _NAMED.finditer(line):
                if (rel, match.group(0)) not in _ALLOWED:
                    found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def method_imports(source: str) -> list[tuple[int, str]]:
    """(line, package) of every import of a method's package in a module's
    source, wherever it stands (at the top, or inside a function or an `if`):
    `import judge.methods.x.y`, `from judge.methods.x import y`, `from
    judge.methods import x`, and a module path written as a string, which
    importlib or a "module:attribute" table imports. judge.methods.registry,
    judge.methods.interface and the other modules beside the packages are
    the methods' API, not a method."""
    packages = set(registry.PACKAGES.values())

    def package(module: str) -> str | None:
        module = module.split(":")[0]
        parts = module.split(".")
        return next((".".join(parts[:i]) for i in range(3, len(parts) + 1) if ".".join(parts[:i]) in packages), None)

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            modules = [node.value]
        else:
            continue
        found += {(node.lineno, p) for m in modules if (p := package(m)) is not None}
    return sorted(found)


def test_the_shell_imports_no_method_but_through_the_registry():
    """Every method is one folder (issue 28): nothing of the shell imports
    one, at the top or in a function, by name or by a string; the registry
    finds its commands, grammar, CLI, tables, protocol, bids and lists by its
    declarations."""
    found = []
    for path in sorted(JUDGE.rglob("*.py")):
        rel = path.relative_to(JUDGE).as_posix()
        if rel.startswith("methods/"):
            continue
        found += [(rel, number, p) for number, p in method_imports(path.read_text())]
    assert not found, "\n".join(f"{rel}:{number}: imports {p}" for rel, number, p in found)


def test_the_import_check_sees_every_kind_of_import():
    source = """
import judge.methods.registry
from judge.methods import get_method, interface


def later():
    from judge.methods.blind_random import runs  # in a function

    if runs:
        import judge.methods.lui.live
    return importlib.import_module("judge.methods.pt3.live"), {"x": "judge.methods.payola.cli:group"}


class Uses:
    def method(self):
        from judge.methods import preference
        from judge.methods.blind_random.runs import gm_run
"""
    assert method_imports(source) == [
        (7, "judge.methods.blind_random"), (10, "judge.methods.lui"), (11, "judge.methods.payola"),
        (11, "judge.methods.pt3"), (16, "judge.methods.preference"), (17, "judge.methods.blind_random")]


def test_a_method_with_its_own_commands_and_timer_runs_through_the_shell(harness, monkeypatch):
    """docs/architecture.md's "How to add a method", done once: the toy is
    one folder (tests/toy_method/) and one registry line, and a game of it
    runs by mail."""
    from tests import toy_method

    folder = Path(toy_method.__file__).parent
    assert {p.name for p in folder.glob("*.py")} == {"__init__.py", "engine.py", "live.py"}
    for module in (toy_method.METHOD.ENGINE, toy_method.METHOD.LIVE_GAME.module):
        assert Path(importlib.import_module(module).__file__).parent == folder
    monkeypatch.setitem(registry.PACKAGES, "countdown", "tests.toy_method")  # the one registry line
    h = harness
    h.mail("gm@example.test", "CREATE ?t gmpw cd\nWAIT 5\nWAIT soon")
    reply = " ".join(h.body(h.last_to("gm@example.test")).split())
    assert "game ?t created (countdown" in reply and "a countdown" in reply
    assert "the countdown of ?t runs out in 5 hours" in reply and "WAIT takes a number of hours" in reply
    with h.judge.sessions() as s:
        game = find_game(s, "t")
        due = game.next_tick
        assert game.method_state["set_by"] == "gm@example.test" and due == h.clock.now() + timedelta(hours=5)
    # The daemon was down for a day: the timer fires with its own time.
    h.clock.advance(hours=24)
    h.run()
    with h.judge.sessions() as s:
        game = find_game(s, "t")
        assert game.method_state["fired"] == [{"at": due.isoformat(), "now": h.clock.now().isoformat()}]
        assert game.next_tick is None  # the method set no new one: not fired again
    h.clock.advance(hours=24)
    h.run()
    with h.judge.sessions() as s:
        assert len(find_game(s, "t").method_state["fired"]) == 1


def test_judge_resolve_takes_a_method_whose_log_is_timed_events(tmp_path, monkeypatch):
    """LUI's replay (judge/methods/lui/replay.py, issue 13) behind the
    interface: `judge resolve` hands it the whole file."""
    import json

    from click.testing import CliRunner

    from judge.cli import main
    from judge.methods.lui.replay import replay
    from tests.test_lui_replay import ISSUE_EXAMPLE

    monkeypatch.setitem(registry.PACKAGES, "lui", "tests.toy_lui")
    path = tmp_path / "lui.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE))
    result = CliRunner().invoke(main, ["resolve", str(path), "--seed", "00ff"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out == {**replay(json.loads(json.dumps(ISSUE_EXAMPLE))), "input": ISSUE_EXAMPLE}
    path.write_text(json.dumps({**ISSUE_EXAMPLE, "colour": "red"}))
    result = CliRunner().invoke(main, ["resolve", str(path)])
    assert result.exit_code != 0 and "unknown key colour" in result.output


@click.group()
def toy_group() -> None:
    """The countdown's own subcommands (a toy: any method adds its group so)."""


@toy_group.command("hello")
def toy_hello() -> None:
    click.echo("hello from the countdown")


def test_a_method_adds_its_cli_group_by_declaring_it(monkeypatch):
    """`judge blind` and `judge thirdparty` are blind-random's CLI, found
    through the registry; any method's is found the same way, with nothing
    of judge/cli.py to change."""
    from click.testing import CliRunner

    from judge.cli import main
    from tests import toy_method

    monkeypatch.setitem(registry.PACKAGES, "countdown", "tests.toy_method")
    monkeypatch.setattr(toy_method.METHOD, "CLI", {"countdown": "tests.test_method_interface:toy_group"})
    listed = CliRunner().invoke(main, ["--help"]).output
    assert "countdown" in listed and "The countdown's own subcommands" in listed
    assert "blind" in listed and "thirdparty" in listed
    result = CliRunner().invoke(main, ["countdown", "hello"])
    assert result.exit_code == 0 and result.output == "hello from the countdown\n"
    assert CliRunner().invoke(main, ["nocommand"]).exit_code != 0


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_says_its_capabilities_by_kind(name):
    """The interface's optional parts come in groups (issue 28): an
    assignment drawn from what players send (with its bids or lists), a
    live game (LIVE_GAME: commands and ticks), a protocol with third
    parties; each group's modules hold what the shell asks of them."""
    from judge.methods.interface import (AssignmentCapability, Bidding, LiveCapability, Lists, ProtocolCapability,
                                         bids_of, lists_of)

    method = METHODS[name]
    live = method.LIVE_GAME is not None
    assert (method.ASSIGNMENT is None) == live  # a game is drawn, or it lives: never both
    if live:
        assert isinstance(method.LIVE_GAME, LiveCapability)
        module = method.LIVE_GAME.load()
        assert all(callable(getattr(module, n)) for n in ("claims", "command", "describe"))
        assert bids_of(method) is None and lists_of(method) is None
    else:
        assert isinstance(method.ASSIGNMENT, AssignmentCapability)
        for capability, protocol in ((method.ASSIGNMENT.bids(), Bidding), (method.ASSIGNMENT.stored_lists(), Lists)):
            if capability is not None:
                wanted = [n for n in vars(protocol) if not n.startswith("_")]
                assert wanted and all(callable(getattr(capability, n)) for n in wanted)
    assert (bids_of(method) is not None) == (method.SUBMITS == "bids")
    assert (lists_of(method) is not None) == (method.SUBMITS == "list")
    if method.THIRD_PARTIES is not None:
        assert isinstance(method.THIRD_PARTIES, ProtocolCapability)
        module = method.THIRD_PARTIES.load()
        assert all(callable(getattr(module, n)) for n in ("judge_to_judge", "runs", "run_line", "run_events"))
        # The protocol runs the game's life cycle: its START and deadline are its own.
        assert type(method.THIRD_PARTIES).begin is not ProtocolCapability.begin
        assert type(method.THIRD_PARTIES).at_deadline is not ProtocolCapability.at_deadline


def _own_members(cls: type) -> set[str]:
    """A class's own declarations and hooks (a dataclass's fields too, those without a default among them)."""
    return {n for n in vars(cls) if not n.startswith("_")} | set(vars(cls).get("__dataclass_fields__", ()))


# What every method must say (issue 28): its names, engine and settings,
# seats, how its players submit, results and replay, what it adds to the
# CLI, the store and the web, the capabilities by kind, and the shell
# commands it refuses.
REQUIRED = {
    "NAME", "ALIASES", "HELP_ALIASES", "ENGINE", "engine", "params_from", "describe_params", "seats",
    "COMMANDS", "SUBMITS", "HOW_TO_SUBMIT", "GRAMMAR", "SYNTAX", "COMMAND_WORDS",
    "RESULTS", "REPLAY", "resolve_file", "replay", "CLI", "MODELS", "BLIND", "refusal",
    "ASSIGNMENT", "LIVE_GAME", "THIRD_PARTIES",
}


def test_the_method_interface_is_small_and_its_options_are_grouped_by_kind():
    """Method holds only what every method says (at most 25 members, not
    the 39 to 45 flat ones it had); what only some methods use lives in
    the capability of its kind: the life cycle, reminders and shell hooks
    of an assignment in AssignmentCapability, the live hooks in
    LiveCapability, the protocol's START, deadline and daily notice in
    ProtocolCapability."""
    from judge.methods import interface
    from judge.methods.interface import (AssignmentCapability, LiveCapability, LiveMethod, Method,
                                         ProtocolCapability)

    assert _own_members(Method) == REQUIRED and len(REQUIRED) <= 25
    # A live method's base adds no declaration of its own: it only says
    # how a live game is described and replayed, and that it draws nothing.
    assert _own_members(LiveMethod) <= {"ASSIGNMENT", "describe_params", "resolve_file", "replay"}
    assert LiveMethod.ASSIGNMENT is None
    grouped = {
        AssignmentCapability: {"resolves_at_start", "starts_at_deadline", "draws_ahead", "starts_when_full",
                               "reminders", "tunable", "kept_by_variant", "replacement_asked", "bidding", "lists",
                               "bids", "stored_lists", "refused", "not_in_yet", "standing_line", "roster_changed",
                               "list_view"},
        LiveCapability: {"module", "claims_module", "reminders", "restart_hint", "load", "hook", "claims"},
        ProtocolCapability: {"module", "notices_daily", "restart_hint", "load", "begin", "at_deadline",
                             "daily_notice"},
    }
    for capability, members in grouped.items():
        assert _own_members(capability) == members, capability.__name__
    # None of what moved is left on a method's class as a flat declaration.
    moved = {"STARTS_AT_DEADLINE", "STARTS_WHEN_FULL", "REMINDED_STATE", "REMINDER", "TUNABLE",
             "KEPT_BY_VARIANT", "RESTART_HINT", "REPLACEMENT_ASKED", "LIVE", "begin", "at_deadline",
             "daily_notice", "not_in_yet", "standing_line", "roster_changed", "list_view", "tick", "refused",
             "claims", "bidding", "lists", "public_board"}
    for name in METHODS:
        for cls in type(METHODS[name]).__mro__:
            if cls.__module__.startswith("judge.methods"):
                assert not (_own_members(cls) & moved), (name, cls.__name__, _own_members(cls) & moved)
    # Each method's declarations are reachable by kind from the shell.
    assert interface.reminders_of(METHODS["payola"]).template == "payola/reminder.txt.j2"
    assert interface.reminders_of(METHODS["random"]) is None
    assert "RERUN" in interface.restart_hint(METHODS["blind-random"])
    assert interface.restart_hint(METHODS["random"]) == ""


def test_the_interface_types_what_the_shell_hands_a_method():
    """No hook of the interface takes its context as Any: a mail's line
    comes as a MailContext (what judge.commands.base.Context gives)."""
    import inspect

    from judge.commands.base import Context
    from judge.methods import interface

    untyped = []
    for cls in (interface.Method, interface.LiveMethod, interface.Bidding, interface.Lists,
                interface.AssignmentCapability, *(type(METHODS[n].ASSIGNMENT) for n in METHODS if METHODS[n].ASSIGNMENT)):
        for name, function in vars(cls).items():
            if callable(function) and "ctx" in inspect.signature(function).parameters:
                if function.__annotations__.get("ctx") != "MailContext":
                    untyped.append(f"{cls.__name__}.{name}")
    assert not untyped
    # The shell's Context has every member a MailContext promises.
    wanted = {n for n in vars(interface.MailContext) if not n.startswith("_")} | set(
        interface.MailContext.__annotations__)
    assert wanted <= set(dir(Context)) | set(Context.__dataclass_fields__)
