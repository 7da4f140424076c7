"""A mail's cost is bounded by its lines, not only its bytes (issue 9;
found by bench/attack_corpus.py): LIST repeated 5,000 times (30 KB) held the
daemon for 3.7 s and got a 337 KB reply; HELP repeated 30,000 times got a
422 KB reply, which a forged From aims at a victim."""

from __future__ import annotations


def test_repeated_list_and_help_run_once(harness):
    h = harness
    h.mail("gm@example.test", "CREATE ?g gmpw")
    h.mail("eve@example.test", "\n".join(["LIST", "HELP", "LIST ?g", "list", "HELP", "LIST ?g"] * 3))
    body = h.body(h.last_to("eve@example.test"))
    assert body.count("one per line, in any case") == 1
    assert "Ignored: the same as line 1" in body and "Ignored: the same as line 3" in body


def test_help_flood_gets_a_small_reply(harness):
    h = harness
    h.mail("eve@example.test", "HELP\n" * 30_000)
    msg = h.last_to("eve@example.test")
    assert len(msg.as_bytes()) < 80_000
    assert f"from line {h.config.max_commands_per_mail + 1} on were not read" in h.body(msg)


def test_lines_past_the_limit_are_not_run(harness):
    h = harness
    h.mail("gm@example.test", "\n".join(f"CREATE ?g{i} gmpw" for i in range(h.config.max_commands_per_mail + 20)))
    body = h.body(h.last_to("gm@example.test"))
    assert "20 lines from line" in body
    from judge.games import find_game

    with h.judge.sessions() as s:
        assert find_game(s, f"g{h.config.max_commands_per_mail - 1}") is not None
        assert find_game(s, f"g{h.config.max_commands_per_mail}") is None
