"""Payola by mail, end to end on SQLite and PostgreSQL (issue 14): a
7-player standard game from Spring 1901 to the Winter 1901 adjustments.
The GM gives five powers (SET POWER), START draws the other two; offer
sheets by mail (a line refused at once with payola-core's reason, the rest
standing; a later sheet replacing an earlier one), SET ACCEPT, a transfer,
LEDGER; each movement phase played at its deadline, the ledgers of the
results mails checked (accepted bribes, offer sheet, previous balance,
cost, new balance); a retreat ordered by its owner, a build, a disband left
to civil disorder; the income before Spring 1902; and every phase's
adjudication equal to the diplomacy engine's own for the same orders."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from judge.games import find_game
from judge.methods.payola import game as G
from judge.methods.payola.live import load
from judge.store.models import Event
from tests.harness import Harness

GM = "gm@example.test"
GIVEN = {"p1": "Austria", "p2": "England", "p3": "France", "p4": "Germany", "p5": "Italy"}


def addr(name: str) -> str:
    return f"{name}@example.test"


def say(h: Harness, who: str, text: str) -> str:
    h.mail(addr(who), f"SIGNON ?pay pw\n{text}")
    return h.body(h.last_to(addr(who)))


def later(h: Harness, hours: float) -> None:
    h.clock.advance(seconds=hours * 3600)
    h.run()


def stored(h: Harness):
    with h.judge.sessions() as s:
        g = find_game(s, "pay")
        state, players = load(g)
        return state, players, g.deadline, g.state


def results(h: Harness, who: str, phase: str) -> str:
    mails = [m for m in h.sent_to(who) if f"Payola {phase} results" in str(m["Subject"])]
    assert len(mails) == 1, [str(m["Subject"]) for m in h.sent_to(who)]
    svg = [p for p in mails[0].iter_attachments() if p.get_content_type() == "image/svg+xml"]
    assert len(svg) == 1
    content = svg[0].get_content()
    assert "<svg" in (content if isinstance(content, str) else content.decode("utf-8"))
    return h.body(mails[0])


def token_of(h: Harness) -> str:
    """The one-time token REPLACE mailed the new player of Italy."""
    mail = [m for m in h.sent_to("newitaly@example.test") if "SIGNON ?pay " in h.body(m)][0]
    return next(w for line in h.body(mail).splitlines() if line.startswith("SIGNON ?pay ")
                for w in line.split()[2:3])


def engine_results(reports: list[dict]) -> list[dict]:
    """The diplomacy engine alone, given each phase's adjudicated orders."""
    from diplomacy import Game

    ref = Game(map_name="standard")
    out = []
    for r in reports:
        assert ref.get_current_phase() == r["phase"]
        for power, orders in r["orders"].items():
            ref.set_orders(power.upper(), orders)
        ref.process()
        out.append({u: [str(x) for x in rs] for u, rs in ref.result_history.last_value().items()})
    return out


def test_a_payola_year_by_mail(harness: Harness):
    h = harness
    h.mail(GM, "CREATE ?pay gmpw payola standard")
    assert "created (payola, variant standard" in h.body(h.last_to(GM))
    players = [f"p{k}" for k in range(1, 8)]
    for p in players:
        h.send(addr(p), "SIGNON ?pay pw")
    h.send("watcher@example.test", "SIGNON Opay pw")
    h.run()
    sets = "\n".join(f"SET POWER {addr(p)} {power}" for p, power in GIVEN.items())
    h.mail(GM, f"SIGNON Mpay gmpw\n{sets}\nSET MOVEMENT HOURS 48\nSTART")
    reply = h.body(h.last_to(GM))
    assert "France p3@example.test" in reply and "S1901M: offer sheets are taken until" in reply, reply
    state, by_power, deadline, _ = stored(h)
    assert {by_power[p] for p in ("Russia", "Turkey")} == {addr("p6"), addr("p7")}  # drawn
    assert deadline == h.clock.now() + timedelta(hours=48)
    me = {power: address.split("@")[0] for power, address in by_power.items()}
    start = h.last_to(addr(me["Russia"]))
    assert "you are Russia" in str(start["Subject"]) and "holds 62 AgP" in h.body(start)
    with h.judge.sessions() as s:
        draws = s.scalars(select(Event).where(Event.kind == "draw")).all()
        assert [d.data["what"] for d in draws] == ["power"]  # the last power needs no draw

    # Spring 1901: sheets, a refused line, a replaced sheet, SET ACCEPT, a transfer, LEDGER.
    reply = say(h, me["France"], "4 : A PAR - BUR\n0 : A MUN - BUR\n2 : F BRE - MAO")
    assert "a zero offer to a foreign unit: A MUN is Germany's" in reply
    assert reply.count("offer 1 of the sheet") == 1 and "Done: offer 2\n" in reply
    assert reply.count("replaces your previous sheet") == 1  # said once a mail, not once a line
    reply = say(h, me["France"], "4 : A PAR - BUR\n5 : A MUN H\nF BRE - MAO")  # replaces the first
    assert "Done: offer 3\n" in reply
    say(h, me["Germany"], "3 : A MUN - BUR\nSET ACCEPT GA")
    assert "your acceptance list is GA?" in h.body(h.last_to(addr(me["Germany"])))
    say(h, me["Austria"], "A VIE - TYR")
    h.mail(GM, "SIGNON Mpay gmpw\n4 : A PAR - BUR")
    assert "the GM of ?pay orders no units" in h.body(h.last_to(GM))
    reply = say(h, me["Russia"], "TRANSFER 10 TO Turkey\nTRANSFER 100 TO Turkey\nLEDGER")
    assert "10 AgP sent to Turkey (told by mail); your balance is 52 AgP" in reply
    assert "you have 52 AgP: you cannot send 100. Nothing was transferred." in reply
    assert "Russia's account: 52 AgP." in reply and "transfer out" in reply
    told = h.last_to(addr(me["Turkey"]))
    assert "10 AgP from Russia" in str(told["Subject"]) and "balance is now 58 AgP" in h.body(told)
    assert "only the GM" not in say(h, me["Italy"], "LEDGER")
    listed = say(h, me["Italy"], "LIST ?pay")
    assert f"Russia   {me['Russia']:<24} 4 centres; units: A WAR, A MOS, F SEV, F STP/SC" in listed
    assert "@" not in listed.split("The board:")[1]  # names, not addresses

    later(h, 48)
    state, _, deadline, _ = stored(h)
    assert G.phase(state) == "F1901M" and deadline == h.clock.now() + timedelta(hours=48)
    spring = state.reports[-1]
    assert spring["orders"]["France"] == ["A MAR H", "A PAR - BUR", "F BRE - MAO"]
    assert "A MUN H" in spring["orders"]["Germany"]  # France's 5 beat Germany's 3
    france = results(h, addr(me["France"]), "S1901M")
    assert "S1901M ACCOUNT STATEMENT FOR FRANCE" in france
    for line in ("   4 AgP  A PAR - BUR", "   5 AgP  A MUN H", "Your offer sheet was:\n  4 : A PAR - BUR\n"
                 "  5 : A MUN H\n  F BRE - MAO", "Previous balance:                48 AgP",
                 "Cost of your bribes:              9 AgP", "New balance:                     39 AgP"):
        assert line in france, (line, france)
    germany = results(h, addr(me["Germany"]), "S1901M")
    assert "Cost of your bribes:              0 AgP" in germany and "New balance:                     48 AgP" in germany
    assert "A PAR - BUR" in germany and "France:" in germany  # the orders for all
    russia = results(h, addr(me["Russia"]), "S1901M")
    assert "Previous balance:                52 AgP" in russia  # after the transfer
    gm = results(h, GM, "S1901M")
    assert "The offer chart (GM only):" in gm and "A MUN" in gm and "[table]" in gm
    assert ("A MUN (Germany) obeys A MUN H\n     3  A MUN - BUR              Germany 3\n"
            "     5  A MUN H                  France 5\n") in gm
    watcher = results(h, "watcher@example.test", "S1901M")  # observers: the orders and position only
    assert "A PAR - BUR" in watcher and "chart" not in watcher and "AgP" not in watcher

    # The GM replaces Italy's player: the newcomer gets Italy's mails.
    h.mail(GM, f"SIGNON Mpay gmpw\nREPLACE {addr(me['Italy'])} newitaly@example.test")
    assert "newitaly@example.test plays Italy from now on" in h.body(h.last_to(GM))
    _, by_power, _, _ = stored(h)
    assert by_power["Italy"] == "newitaly@example.test"

    # Fall 1901: Austria's bribe makes A TYR support France into Munich.
    say(h, me["France"], "3 : A BUR - MUN\n2 : F MAO - POR")
    say(h, me["Austria"], "6 : A TYR S A BUR - MUN")
    say(h, me["Germany"], "4 : A TYR H")
    later(h, 47)  # an hour before the deadline: a reminder to each player who sent no sheet
    reminded = [m for m in h.sent_to("newitaly@example.test") if "reminder" in str(m["Subject"])]
    assert len(reminded) == 1 and "F1901M waits for your offer sheet" in str(reminded[0]["Subject"])
    assert "no offer sheet from you yet" in h.body(reminded[0])
    assert not [m for m in h.sent_to(addr(me["France"])) if "reminder" in str(m["Subject"])]
    h.clock.advance(seconds=3600)  # the deadline: a sheet stored now is read before the phase is played
    h.mail("newitaly@example.test", "SIGNON ?pay " + token_of(h) + "\n9 : A TYR H")
    reply = next(h.body(m) for m in h.sent_to("newitaly@example.test") if "> 9 : A TYR H" in h.body(m))
    assert "Rejected: the deadline of F1901M (" in reply and "has passed" in reply
    state, _, deadline, _ = stored(h)
    assert G.phase(state) == "F1901R" and deadline == h.clock.now() + timedelta(hours=24)
    fall = state.reports[-1]
    assert fall["results"]["A MUN"] == ["dislodged"]
    austria = results(h, addr(me["Austria"]), "F1901M")
    assert "ACCOUNT STATEMENT FOR ITALY" in results(h, "newitaly@example.test", "F1901M")
    assert "Previous balance:                48 AgP" in austria and "New balance:                     42 AgP" in austria
    # Issue 26: the dislodged German army and the French one in Munich are both in the position,
    # in the results mails and in LIST.
    german = results(h, addr(me["Germany"]), "F1901M")
    position = german[german.index("The position (F1901R):"):]
    france_line = next(x for x in position.splitlines() if x.startswith("France"))
    germany_line = next(x for x in position.splitlines() if x.startswith("Germany"))
    assert "A MUN" in france_line and "dislodged" not in france_line
    assert "A MUN (dislodged)" in germany_line
    h.mail(GM, "LIST ?pay")
    listed = h.body(h.last_to(GM))
    assert "A MUN (dislodged)" in next(x for x in listed.splitlines() if x.strip().startswith("Germany"))

    # Retreats: the owner orders; a foreign power cannot.
    assert "nothing to order" in say(h, me["France"], "A MUN R BOH")
    # Issue 26 (6): an offer sheet sent in the retreats is kept for the next movement phase.
    reply = say(h, me["France"], "3 : A MUN R BOH\n3 : A MUN - RUH")
    assert "line 2: 3 : A MUN R BOH" in reply and "This line is not part of your sheet" in reply
    assert "offer 1 of a sheet for the next movement phase: it is F1901R now" in reply
    assert "your sheet for the movement phase after F1901R: 1 line, kept for that phase" in reply
    assert "no retreat order" in say(h, me["Germany"], "A MUN R BUR")
    assert "A MUN R BOH: order 1 of this mail" in say(h, me["Germany"], "A MUN - BOH")
    h.clock.advance(seconds=3600)
    h.mail(GM, "SIGNON Mpay gmpw\nPROCESS")  # the GM plays the retreats before their deadline
    # PROCESS is answered at once; the phase is played as its own job, under
    # the game's lock but outside the mail's transaction (judge/driver/).
    assert "F1901R of ?pay is played now, as at its deadline" in h.body(h.sent_to_kind(GM, "reply")[-1])
    assert str(h.last_to(GM)["Subject"]) == "?pay: Payola F1901R results (GM)"
    state, _, deadline, _ = stored(h)
    assert G.phase(state) == "W1901A" and G.units(state)["A BOH"] == "Germany"
    assert deadline == h.clock.now() + timedelta(hours=24)
    results(h, addr(me["Germany"]), "F1901R")

    # Adjustments: France builds one of its two, Germany sends nothing.
    reply = say(h, me["France"], "BUILD A PAR\nA PAR B\nWAIVE\nF BRE B")
    assert "A PAR B: order 1" in reply and "PAR has an order in this mail already (A PAR B not taken)" in reply
    assert "WAIVE: order 2" in reply and "you have 2 orders to give in W1901A, and this mail gave them already" in reply
    later(h, 24)
    state, _, _, game_state = stored(h)
    assert G.phase(state) == "S1902M" and game_state == "bidding"
    assert state.sheets == {"France": "3 : A MUN - RUH"} and state.early == {}  # the early sheet stands now
    winter = state.reports[-1]
    assert winter["orders"]["France"] == ["A PAR B"]  # the engine keeps no WAIVE among its orders
    assert len([u for u, p in G.units(state).items() if p == "Germany"]) == 2
    france = results(h, addr(me["France"]), "W1901A")
    assert "Income before S1902M: 75 AgP from 5 centres." in france
    assert "Your balance: 109 AgP." in france  # 48, less 9 in Spring and 5 in Fall, plus 75
    assert state.ledger.balance("France") == 48 - 9 - 5 + 75
    assert state.ledger.balance("Russia") == 62 - 10 + 62
    assert state.ledger.balance("Turkey") == 48 + 10 + 48

    # The adjudication of every phase is the engine's own for the same orders.
    reports = list(state.reports)
    assert [r["phase"] for r in reports] == ["S1901M", "F1901M", "F1901R", "W1901A"]
    assert [r["results"] for r in reports] == engine_results(reports)
    # Each movement phase's record (in the audit trail) replays with
    # `judge resolve` (the method's resolve_file) to the same orders.
    from judge.methods import get_method

    with h.judge.sessions() as s:
        records = [e.data for e in s.scalars(select(Event).where(Event.kind == "payola")) if e.data["event"] == "movement"]
    assert [r["input"]["phase"] for r in records] == ["S1901M", "F1901M"]
    for record, report in zip(records, reports):
        again = get_method("payola").resolve_file(record["input"], bytes.fromhex(record["seed"]))
        chosen = {u: o for orders in report["orders"].values() for o in orders for u in [" ".join(o.split()[:2])]}
        assert again["orders"] == chosen
    with h.judge.sessions() as s:
        lines = [e.data for e in s.scalars(select(Event).where(Event.kind == "payola")) if e.data["event"] == "ledger"]
        assert {(x["power"], x["entry"]) for x in lines} >= {("France", "bribes"), ("Russia", "transfer out"),
                                                          ("Turkey", "transfer in"), ("France", "income")}
