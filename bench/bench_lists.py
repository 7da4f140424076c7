"""Preference lists from text, against the engine (issue 29, "Lists").

Run:  .venv/bin/python bench/bench_lists.py [--cases 200] [--mails 30] [--sizes 7,36,100]

1. The whole method from text: 36 players' lists as players mail them
   (letters run together, names with commas or ">", numbered lists,
   brackets, BBCode around a name, `*`), read and resolved by the method's
   replay (judge.methods.preference.replay.resolve: what `judge resolve`
   and the daemon run) on the Void variant's 36 powers; against the engine
   alone (judge.methods.preference.engine.resolve) on the same lists read
   beforehand, with the same stream seed. The two are interleaved, so that a
   slow phase of the machine hits both alike; the ratio is median/median.
   The aim: at most 3x the engine.

2. One SET PREFERENCE mail through the daemon (tests/harness.py: SQLite in
   a temporary folder, a manual clock), once all the players of a game of
   7, 36 and 100 powers have joined and sent a list: the mail is stored and
   run (the password, the list read and stored, the reply, the master's
   notice), timed from the raw bytes to the commit. Per size the median,
   and its ratio to the median of size 7 and to the engine's median of
   part 1 (same run): the per-mail cost should not grow with the number of
   players.

Nothing is asserted; tests/test_preference_reader.py checks what is read.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter_ns

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.methods.preference import engine, replay  # noqa: E402
from judge.rng import DrawStream  # noqa: E402
from judge.variants import variant_powers  # noqa: E402

PARAMS = {"mode": "both", "shortcut": False, "players": None}


def written(rnd: random.Random, powers, groups: list[tuple[str, ...]]) -> str:
    """A list as a player writes it, in one of the forms players use."""
    letter = {p.name: p.letter for p in powers}
    style = rnd.randrange(5)
    if style == 0 and all(letter[n] for g in groups for n in g):
        return "".join(letter[g[0]] if len(g) == 1 else "[" + "".join(letter[n] for n in g) + "]" for g in groups)
    if style == 1:
        return " > ".join(g[0] if len(g) == 1 else "[" + " ".join(g) + "]" for g in groups)
    if style == 2:
        return " ".join(f"{k}. " + (g[0] if len(g) == 1 else "[" + ", ".join(g) + "]")
                        for k, g in enumerate(groups, 1))
    if style == 3:
        first, *rest = groups
        shown = f"[b]{first[0]}[/b]" if len(first) == 1 else "[" + " ".join(first) + "]"
        return ", ".join([shown, *(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in rest)])
    return "SET PREFERENCE " + ", ".join(g[0] if len(g) == 1 else "[" + " ".join(g) + "]" for g in groups)


def profile(rnd: random.Random, powers) -> dict[str, str]:
    """36 players' lists, as in bench/bench_preference.py: a common
    popularity plus noise, brackets, partial lists, `*`, empty lists."""
    names = powers.names
    n = len(names)
    popularity = [rnd.gauss(0.0, 1.0) for _ in range(n)]
    noise = rnd.uniform(0.3, 1.5)
    out = {}
    for k in range(n):
        u = rnd.random()
        if u < 0.05:
            out[f"player{k:02d}@example.test"] = "*"
            continue
        if u < 0.08:
            out[f"player{k:02d}@example.test"] = ""
            continue
        order = sorted(range(n), key=lambda j: popularity[j] + rnd.gauss(0.0, noise))
        groups = [(names[j],) for j in order]
        u = rnd.random()
        if u < 0.30:
            size = rnd.randint(2, 4)
            start = rnd.randint(0, n - size)
            groups[start:start + size] = [tuple(names[j] for j in order[start:start + size])]
        elif u < 0.60:
            groups = groups[:rnd.randint(1, n - 1)]
        out[f"player{k:02d}@example.test"] = written(rnd, powers, groups)
    return out


def whole_method(cases: int, seed: int) -> float:
    import gc

    powers = variant_powers("void")
    params = engine.params_from(PARAMS, len(powers))
    rnd = random.Random(seed)
    profiles = [profile(rnd, powers) for _ in range(cases)]
    parsed = [{pl: engine.read_preference_carefully(replay.strip_command(t), powers) for pl, t in texts.items()}
              for texts in profiles]
    warm = profile(rnd, powers)
    for _ in range(10):  # the solver's imports and kernels
        replay.resolve(powers, PARAMS, warm, DrawStream(b"warm"))
    gc.collect()
    gc.freeze()  # the heap of the set-up is not collected again and again in the timed part
    t_cold, t_read, t_engine = [], [], []
    for k, (texts, lists) in enumerate(zip(profiles, parsed)):
        key = b"bench" + k.to_bytes(4, "big")
        a = perf_counter_ns()
        engine.resolve(powers, params, lists, DrawStream(key))
        b = perf_counter_ns()
        record = replay.resolve(powers, PARAMS, texts, DrawStream(key))  # never read before: cold
        c = perf_counter_ns()
        replay.resolve(powers, PARAMS, texts, DrawStream(key))  # read once already, as SET PREFERENCE did
        d = perf_counter_ns()
        assert not record["rejected"], record["rejected"]
        t_engine.append((b - a) / 1e6)
        t_cold.append((c - b) / 1e6)
        t_read.append((d - c) / 1e6)
    med = statistics.median
    e = med(t_engine)
    print(f"the engine alone, 36 players' lists read beforehand: median {e:.3f} ms")
    print(f"the whole method from text, as the daemon resolves (each list read once, at its SET PREFERENCE): "
          f"median {med(t_read):.3f} ms, {med(t_read) / e:.2f}x the engine (aim <= 3x)")
    print(f"the whole method from text never read before (`judge resolve` of a new file): median "
          f"{med(t_cold):.3f} ms, {med(t_cold) / e:.2f}x the engine")
    return e


def per_mail(sizes: list[int], mails: int, engine_ms: float) -> None:
    from tests.harness import Harness, make_mail

    medians = {}
    for n in sizes:
        names = [f"Power{k:03d}" for k in range(n)]
        with tempfile.TemporaryDirectory() as tmp:
            h = Harness(Path(tmp) / "data", f"sqlite:///{tmp}/judge.sqlite3",
                        sections={"variants": {"big": {"powers": names}}}, default_method="preference")
            try:
                h.mail("gm@example.test", "CREATE ?g gmpw preference big\nSET MANUAL START")
                rnd = random.Random(n)
                players = [f"p{k:03d}@example.test" for k in range(n)]
                for k, address in enumerate(players):
                    order = names[:]
                    rnd.shuffle(order)
                    h.send(address, f"SIGNON ?g pw\nSET PREFERENCE {', '.join(order[:10])}")
                h.run()
                times = []
                for k in range(mails):
                    order = names[:]
                    rnd.shuffle(order)
                    raw = make_mail(players[k % n], f"SIGNON ?g pw\nSET PREFERENCE {', '.join(order[:10])}",
                                    message_id=f"<bench{k}@players.test>")
                    a = perf_counter_ns()
                    h.judge.receive(raw, source="bench")
                    h.judge.process_pending()
                    times.append((perf_counter_ns() - a) / 1e6)
                medians[n] = statistics.median(times[3:] or times)
            finally:
                h.close()
    base = medians[sizes[0]]
    for n, med in medians.items():
        print(f"one SET PREFERENCE mail, {n} players in: median {med:.2f} ms; {med / base:.2f}x the "
              f"{sizes[0]}-player game's; {med / engine_ms:.1f}x the engine's 36-player resolution")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--mails", type=int, default=30)
    ap.add_argument("--sizes", default="7,36,100")
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args()
    engine_ms = whole_method(args.cases, args.seed)
    per_mail([int(x) for x in args.sizes.split(",")], args.mails, engine_ms)


if __name__ == "__main__":
    main()
