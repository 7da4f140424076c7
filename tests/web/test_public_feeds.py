"""The Atom feeds of results (feedgen): one for the judge, one per game;
an entry per resolution, newest first, the assignment by name."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.web.games import GM, blind_auction, forming

ATOM = "{http://www.w3.org/2005/Atom}"


def entries(xml: bytes) -> list[dict]:
    root = ET.fromstring(xml)
    return [{"title": e.findtext(f"{ATOM}title"), "id": e.findtext(f"{ATOM}id"),
             "link": e.find(f"{ATOM}link").get("href"), "content": e.findtext(f"{ATOM}content"),
             "updated": e.findtext(f"{ATOM}updated")} for e in root.findall(f"{ATOM}entry")]


def test_the_feeds_list_each_result_newest_first(harness, live_web):
    h = harness
    blind_auction(h)
    h.clock.advance(hours=1)
    forming(h, "dice", "random", 7)
    h.mail(GM, "SIGNON Mdice gmsecret\nSTART")
    forming(h, "later", "random", 2)  # not resolved: no entry

    judge = live_web.get("/feed.atom")
    assert judge.headers["content-type"].startswith("application/atom+xml")
    root = ET.fromstring(judge.content)
    assert root.findtext(f"{ATOM}title") == "Judge: results"
    listed = entries(judge.content)
    assert [e["title"] for e in listed] == ["dice: results", "spring: results"]
    assert listed[0]["link"] == live_web.url + "/game/dice" and listed[0]["updated"] > listed[1]["updated"]
    spring = listed[1]["content"]
    assert "spring (blind-auction) was resolved at" in spring and "Russia: Cat" in spring and "Seed: " in spring
    assert "@example.test" not in judge.text

    (only,) = entries(live_web.get("/game/spring/feed.atom").content)
    assert only["id"] == listed[1]["id"] and only["content"] == spring
    assert entries(live_web.get("/game/later/feed.atom").content) == []
    assert live_web.get("/game/nosuch/feed.atom").status_code == 404
