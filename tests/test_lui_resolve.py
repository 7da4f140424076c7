"""`judge resolve FILE --format json|text|bbcode` on LUI's log (issue 13's
example), through the registered method (Method.resolve_file -> replay.py),
and its live parts that need no mail: the state's JSON round trip, the GM's
settings as games.params."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.methods import get_method
from judge.methods.lui import engine
from judge.methods.lui.commands import parse_line
from judge.methods.lui.settings import F11
from judge.methods.lui.persist import from_json, to_json
from judge.methods.lui.replay import replay, run
from tests.test_lui_replay import ISSUE_EXAMPLE


@pytest.fixture
def example(tmp_path):
    path = tmp_path / "lui.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE))
    return str(path)


def test_json_is_the_replay_with_its_input(example):
    result = CliRunner().invoke(main, ["resolve", example, "--format", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out == {**replay(json.loads(json.dumps(ISSUE_EXAMPLE))), "input": ISSUE_EXAMPLE}
    assert out["seats"]["Z"]["winner"] == "crawron" and out["winner"] == "crawron" and out["ec"] == "ann"
    assert [r["ok"] for r in out["results"]] == [True, True]


def test_text_shows_the_final_state(example):
    result = CliRunner().invoke(main, ["resolve", example, "--format", "text"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "  Z  crawron              won with   6 at 24.5 h (0 garnets, 0 priority)" in text
    assert "The auction ended at 24.5 h (quiet)." in text and "Winner: crawron, seat Z with 6." in text
    assert "EC: ann (winner); candidates reds, ann." in text
    assert "The game waits: for the ToL gifts." in text
    assert "  crawron                 14        0         1    6" in text
    assert "  0 h  reds                   5 on Z (pregame): outbid at 0.5 h" in text


def test_bbcode_shows_the_final_state(example):
    result = CliRunner().invoke(main, ["resolve", example, "--format", "bbcode"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("[b]Lowest Unique Integer[/b] (F11;")
    assert "[tr][td]Z[/td][td]crawron[/td][td]6[/td][td]24.5 h[/td][/tr]" in text
    assert "[tr][td]ann (EC)[/td][td]20[/td][td]1[/td][td]2[/td][td]0[/td][/tr]" in text
    assert "[*]0.5 h: crawron 6 on Z: won" in text
    assert text.count("[table]") == text.count("[/table]") == 2


def test_a_bad_log_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**ISSUE_EXAMPLE, "events": [{"at": "soon", "player": "ann", "text": "BID Z 3"}]}))
    result = CliRunner().invoke(main, ["resolve", str(path)])
    assert result.exit_code != 0 and "events[0]: at must be a number of hours" in result.output


def test_the_state_round_trips_through_json():
    state = run(json.loads(json.dumps(ISSUE_EXAMPLE))).state
    stored = json.loads(json.dumps(to_json(state)))
    assert from_json(stored) == state
    assert stored["$"] == "State"


def _tagged(v):
    """A state as persist.py stored it before its tables: every record an
    object tagged with its class."""
    if is_dataclass(v):
        return {"$": type(v).__name__, **{f.name: _tagged(getattr(v, f.name)) for f in fields(v)}}
    if isinstance(v, frozenset):
        return {"$set": sorted(v)}
    if isinstance(v, tuple):
        return [_tagged(x) for x in v]
    return v


def test_the_records_are_tables_and_a_state_stored_before_them_reads_as_it_did():
    state = run(json.loads(json.dumps(ISSUE_EXAMPLE))).state
    stored = json.loads(json.dumps(to_json(state)))
    assert stored["history"]["$rows"] == "BidRecord" and stored["players"]["$rows"] == "Player"
    assert stored["history"]["rows"][0] == [getattr(state.history[0], f.name) for f in fields(engine.BidRecord)]
    old = json.loads(json.dumps(_tagged(state)))
    assert from_json(old) == state
    assert to_json(from_json(old)) == stored
    memo: dict = {}
    read = from_json(old, memo)
    later, _ = engine.tick(read, read.clock + 1)  # a new state object, its records the same
    assert to_json(later, memo) == to_json(later)  # stored again: as tables
    # A row without the fields a later version added: their defaults.
    stored["history"]["rows"] = [row[:4] for row in stored["history"]["rows"]]
    assert from_json(stored).history == tuple(engine.BidRecord(*row[:4]) for row in stored["history"]["rows"])


def test_a_state_stored_again_through_its_memo_is_the_state_as_changed():
    """A bid's store reuses the JSON of what the engine left unchanged
    (persist.py's memo): what it stores is what a store from scratch
    stores, for the state read and for the state after a command."""
    state, _ = engine.tick(engine.new_game(F11, ["reds", "crawron", "ann"]), 0.0)
    for at, (player, line) in enumerate([("reds", "BID Z 5"), ("crawron", "BID O 3")], 1):
        state, _ = engine.apply(state, player, parse_line(line, 1), float(at))
    stored = json.loads(json.dumps(to_json(state)))
    memo: dict = {}
    state = from_json(stored, memo)
    assert to_json(state, memo) == stored
    changed, events = engine.apply(state, "ann", parse_line("BID Z 6", 1), 3.0)
    assert any(isinstance(e, engine.Outbid) for e in events)  # reds' record on Z changed, crawron's did not
    assert changed.history[1] is state.history[1] and changed.history[0] != state.history[0]
    again = to_json(changed, memo)
    assert again == to_json(changed) and from_json(json.loads(json.dumps(again))) == changed
    assert to_json(changed, memo) == again  # a second store of the same state


def test_the_gms_settings_are_the_games_params():
    method = get_method("lui")
    assert method is get_method("lowest-unique-integer")
    params = engine.params_from({"preset": "F8", "timer_hours": 12.0, "prizes": {"Z": [3, 1]}, "players": 6,
                                 "garnets": {"a@example.test": 2}}, 7)
    assert engine.params_from(params.as_dict(), 7) == params
    s = params.settings()
    assert (s.preset, s.timer_hours, s.prize("Z").garnets, s.starting_chips, s.chip_price) == ("F8", 12.0, 3, 16, 2)
    assert method.seats(7, params.as_dict()) == 6 and method.seats(7, {"preset": "F11"}) == 11
    assert method.seats(7, {"preset": "F8"}) == 8
    with pytest.raises(engine.ParamError, match="unknown preset"):
        engine.params_from({"preset": "F9"}, 7)


def test_the_text_opens_with_the_standings_and_lists_only_refused_events(tmp_path):
    """Issue 26, point 15: the results opened with one "1. ok" line per event
    (46 of them for a game); they open with the standings now, and the
    log's refused lines alone follow them."""
    data = {**ISSUE_EXAMPLE, "events": ISSUE_EXAMPLE["events"][:1]
            + [{"at": 1, "player": "reds", "text": "BID Z 2"}] + ISSUE_EXAMPLE["events"][1:]}
    path = tmp_path / "lui.json"
    path.write_text(json.dumps(data))
    text = CliRunner().invoke(main, ["resolve", str(path), "--format", "text"]).output
    lines = [x for x in text.splitlines() if x.strip()]
    assert lines[1] == "Winner: crawron, seat Z with 6." and lines[2].startswith("EC: ann")
    assert text.index("chips  garnets") < text.index("Seats:") < text.index("Every valid bid")
    assert "1. ok" not in text and " ok" not in text
    tail = text[text.index("The log's lines the game refused"):]
    assert "(1 of 3 events; the others were taken)" in tail
    assert "event 2: refused (2): Rule 2:" in tail and tail.count("event ") == 1
    path.write_text(json.dumps(ISSUE_EXAMPLE))
    assert "All 2 events of the log were taken." in CliRunner().invoke(main, ["resolve", str(path), "--format",
                                                                           "text"]).output


def test_a_games_own_record_is_a_log_judge_resolve_reads(tmp_path):
    """Issue 26, point 15: `judge resolve` takes a LUI game's own
    resolution.json (the record its results carry: judge/record.py), and
    `judge resolve --format json`'s output, and gives the game's result."""
    from judge import record

    result = replay(json.loads(json.dumps(ISSUE_EXAMPLE)))
    sealed = record.sealed("lu", "lui", ISSUE_EXAMPLE, None, result)
    path = tmp_path / "resolution.json"
    path.write_bytes(record.to_bytes(sealed))
    run = CliRunner().invoke(main, ["resolve", str(path), "--format", "json"])
    assert run.exit_code == 0, run.output
    out = json.loads(run.output)
    assert {k: v for k, v in out.items() if k != "input"} == result
    again = tmp_path / "again.json"
    again.write_text(run.output)
    run = CliRunner().invoke(main, ["resolve", str(again), "--format", "text"])
    assert run.exit_code == 0 and "Winner: crawron, seat Z with 6." in run.output
    path.write_text(json.dumps({**sealed, "method": "pt3"}))
    run = CliRunner().invoke(main, ["resolve", str(path)])
    assert run.exit_code != 0
