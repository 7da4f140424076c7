"""Games for the web tests, made the real way: by mail through the harness's
judge (its Maildir inbox and its daemon iteration)."""

from __future__ import annotations

from email.utils import formataddr

from tests.harness import Harness

GM = "gm@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
NAMES = ["Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus"]


def addr(name: str) -> str:
    return f"{name.lower()}@example.test"


def blind_auction(h: Harness, game: str = "spring", names=NAMES, *, resolve: bool = True,
                  addresses: list[str] | None = None) -> None:
    """A standard Blind Auction with seven players; every list in (Gus:
    No Preference); PROCESS resolves it unless `resolve` is False."""
    addresses = addresses or [addr(n) for n in names]
    h.mail(GM, f"CREATE ?{game} gmsecret blind-auction standard\nSET DEADLINE +48h\nSIGNOFF")
    for name, address in zip(names, addresses):
        h.send(formataddr((name, address)), f"SIGNON ?{game} pw\nSIGNOFF")
    h.run()
    h.mail(GM, f"SIGNON M{game} gmsecret\nSTART")
    if not resolve:
        return
    for k, address in enumerate(addresses):
        if k == len(names) - 1:
            text = "No Preference"
        else:
            # Ann and Bob bid alike (40 on Austria): a draw between them.
            base = [40, 30, 20, 15, 10, 5, 1]
            values = base if k < 2 else base[k:] + base[:k]
            text = "\n".join(f"{p}: {v}" for p, v in zip(POWERS, values))
        h.send(address, f"SIGNON ?{game} pw\n{text}\nSIGNOFF")
    h.run()
    h.mail(GM, f"SIGNON M{game} gmsecret\nPROCESS")
    # PROCESS is answered at once; the resolution is a job of its own, run in
    # the same pass: the master's results are the last mail to the GM.
    assert f"?{game} is resolved now" in h.body(h.sent_to_kind(GM, "reply")[-1])
    assert f"?{game}: " in str(h.last_to(GM)["Subject"]) and "resolved" in h.body(h.last_to(GM))


def forming(h: Harness, game: str, method: str, players: int, *, deadline: str | None = None) -> None:
    """A game with `players` signed on, not started."""
    lines = [f"CREATE ?{game} gmsecret {method} standard"]
    if deadline:
        lines.append(f"SET DEADLINE {deadline}")
    h.mail(GM, "\n".join(lines) + "\nSIGNOFF")
    for k in range(players):
        h.send(f"P{k} <{game}-p{k}@example.test>", f"SIGNON ?{game} pw\nSIGNOFF")
    h.run()
