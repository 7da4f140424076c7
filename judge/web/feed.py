"""Atom feeds of results (feedgen: the library writes and escapes the XML).

One entry per resolution: the game, when, the assignment by the players'
public names, the seed. A blind game's entry says only that it is assigned.
The entry text comes from templates/web/public/feed_entry.txt.j2.
"""

from __future__ import annotations

from typing import Any

from feedgen.feed import FeedGenerator

from judge.config import Config
from judge.templating import render


def atom(config: Config, base: str, entries: list[dict[str, Any]], game: str | None) -> bytes:
    fg = FeedGenerator()
    if game is None:
        fg.id(f"{base}/feed.atom")
        fg.title(f"{config.name}: results")
        fg.link(href=f"{base}/", rel="alternate")
        fg.link(href=f"{base}/feed.atom", rel="self")
    else:
        fg.id(f"{base}/game/{game}/feed.atom")
        fg.title(f"{config.name}: results of {game}")
        fg.link(href=f"{base}/game/{game}", rel="alternate")
        fg.link(href=f"{base}/game/{game}/feed.atom", rel="self")
    fg.author({"name": config.name})
    # An empty feed still needs its "updated": the feed's creation.
    if entries:
        fg.updated(max(e["at"] for e in entries))
    for e in reversed(entries):  # feedgen lists the last added first
        fe = fg.add_entry()
        # A tag URI (RFC 4151): the same id whatever host name the feed
        # was fetched by (a proxy, a new domain).
        fe.id(f"tag:{config.domain},{e['at']:%Y-%m-%d}:game/{e['game']}/resolution/{e['id']}")
        fe.title(f"{e['game']}: results")
        fe.link(href=f"{base}/game/{e['game']}")
        fe.updated(e["at"])
        fe.published(e["at"])
        fe.content(render("web/public/feed_entry.txt.j2", entry=e).strip(), type="text")
    return fg.atom_str(pretty=True)
