"""The public game page under load (issue 16).

Run:  .venv/bin/python bench/bench_web.py [--requests 2000] [--clients 20] [--postgresql [ADMIN_URL]]

Builds a store (SQLite in a scratch folder, or a scratch PostgreSQL
database) with one 36-player Blind Auction, resolved by mail through the
harness's judge (36 players sign on and bid), and 10,000 audit events
added to its trail. Then a real `judge web` process (uvicorn, one worker)
serves it, and --clients concurrent clients (httpx's async client, one
connection each) ask for --requests pages in all: first the game page
(/game/big), then a static file (/static/web.css) from the same server in
the same run. Prints the median and p99 response time of each and their
ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PLAYERS = 36
EVENTS = 10_000


def build(data_dir: Path, url: str) -> None:
    from judge.store.models import Event
    from judge.games import find_game
    from tests.harness import Harness

    powers = [f"Power{k:02d}" for k in range(PLAYERS)]
    h = Harness(data_dir, url, sections={"variants": {"big": {"powers": powers}}})
    gm = "gm@example.test"
    h.mail(gm, "CREATE ?big gmpw blind-auction big\nSIGNOFF")
    for k in range(PLAYERS):
        h.send(f"Player {k} <p{k}@example.test>", "SIGNON ?big pw\nSIGNOFF")
    h.run()
    h.mail(gm, "SIGNON Mbig gmpw\nSTART")
    for k in range(PLAYERS):
        bids = [((j + k) % PLAYERS) + 1 for j in range(PLAYERS)]  # 1..36, each once
        h.send(f"p{k}@example.test", "SIGNON ?big pw\n" + "\n".join(f"{p}: {b}" for p, b in zip(powers, bids)))
    h.run()
    h.mail(gm, "SIGNON Mbig gmpw\nPROCESS")
    with h.judge.sessions.begin() as s:
        g = find_game(s, "big")
        assert g.state == "resolved", (g.state, h.body(h.last_to(gm)))
        have = s.query(Event).filter(Event.game_id == g.id).count()
        now = h.clock.now()
        s.add_all(Event(at=now + timedelta(seconds=k), game_id=g.id, kind="command",
                        data={"line": k % 40, "status": "done", "text": f"LIST ?big #{k}", "message": "listed"})
                  for k in range(max(0, EVENTS - have)))
    with h.judge.sessions() as s:
        g = find_game(s, "big")
        print(f"store: {url.split('?')[0].rsplit('/', 1)[-1]}: 1 game, {len(g.players)} players, "
              f"{s.query(Event).filter(Event.game_id == g.id).count()} audit events")
    h.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def load(url: str, total: int, clients: int) -> list[float]:
    import httpx

    times: list[float] = []
    left = [total]

    async def client() -> None:
        async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1)) as c:
            while left[0] > 0:
                left[0] -= 1
                t = time.perf_counter()
                r = await c.get(url)
                times.append(time.perf_counter() - t)
                assert r.status_code == 200, r.status_code

    await asyncio.gather(*(client() for _ in range(clients)))
    return times


def figures(label: str, times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    median = statistics.median(times)
    p99 = times[min(len(times) - 1, int(round(0.99 * len(times))) - 1)]
    print(f"{label:<22} {len(times):>6} requests  median {median * 1000:8.2f} ms  p99 {p99 * 1000:8.2f} ms")
    return median, p99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--postgresql", nargs="?", const="postgresql+psycopg://postgres@127.0.0.1:5432/test",
                    help="a scratch database made (and dropped) through this admin URL")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_web_"))
    admin = name = None
    if args.postgresql:
        from sqlalchemy import create_engine, text

        name = f"bench_web_{uuid.uuid4().hex[:10]}"
        admin = create_engine(args.postgresql, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        url = args.postgresql.rsplit("/", 1)[0] + "/" + name
    else:
        url = f"sqlite:///{tmp / 'judge.sqlite3'}"
    proc = None
    try:
        build(tmp / "data", url)
        config = tmp / "judge.toml"
        config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{url}"\n'
                          f'data_dir = "{tmp / "data"}"\n')
        port = free_port()
        log = (tmp / "web.log").open("wb")
        proc = subprocess.Popen([str(Path(sys.executable).with_name("judge")), "--config", str(config), "web",
                                 "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        import httpx

        for _ in range(300):
            try:
                if httpx.get(base + "/game/big").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise SystemExit("judge web did not answer")
        asyncio.run(load(base + "/game/big", 100, args.clients))  # warm up: templates compiled, pool filled
        print(f"{args.clients} concurrent clients, one `judge web` process (uvicorn, 1 worker), "
              f"{os.cpu_count()} CPUs")
        page = figures("/game/big", asyncio.run(load(base + "/game/big", args.requests, args.clients)))
        static = figures("/static/web.css", asyncio.run(load(base + "/static/web.css", args.requests,
                                                              args.clients)))
        print(f"ratio page/static: median {page[0] / static[0]:.1f}x, p99 {page[1] / static[1]:.1f}x")
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        if admin is not None:
            from sqlalchemy import text

            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
