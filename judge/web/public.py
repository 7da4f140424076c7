"""The public pages (no login): the games, one game's page and its live
part, the board picture, the published record, the Atom feeds.

Endpoints are plain functions: Starlette runs them in its thread pool, so
a store read never holds the event loop, and each request opens and closes
its own session (the web has its own engine: the daemon's connections are
never touched).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from judge import driver
from judge.web import feed, queries

# Columns of the games list the server sorts by (?sort=NAME, ?sort=-NAME).
SORTS = ("name", "method", "variant", "state", "deadline", "players")


def routes() -> list[Route]:
    return [
        Route("/", index, name="index"),
        Route("/feed.atom", judge_feed, name="judge_feed"),
        Route("/game/{name}", game, name="game"),
        Route("/game/{name}/live", live, name="live"),
        Route("/game/{name}/board.png", board_png, name="board_png"),
        Route("/game/{name}/board.svg", board_svg, name="board_svg"),
        Route("/game/{name}/resolution.json", resolution_json, name="resolution_json"),
        Route("/game/{name}/feed.atom", game_feed, name="game_feed"),
    ]


def _page(request: Request, template: str, **context: Any) -> HTMLResponse:
    html = request.app.state.templates.get_template(template).render(request=request, **context)
    return HTMLResponse(html)


def _sorted(rows: list[dict], sort: str) -> tuple[list[dict], str]:
    key, reverse = sort.lstrip("-"), sort.startswith("-")
    if key not in SORTS:
        return rows, "name"

    def value(r: dict) -> Any:
        v = r[key]
        return v.casefold() if isinstance(v, str) else v

    # Games without a deadline come last either way round.
    present = [r for r in rows if r[key] is not None]
    absent = [r for r in rows if r[key] is None]
    return sorted(present, key=value, reverse=reverse) + absent, sort


def index(request: Request) -> HTMLResponse:
    with request.app.state.sessions() as s:
        rows = queries.games_list(s)
    rows, sort = _sorted(rows, request.query_params.get("sort", "name"))
    return _page(request, "web/public/index.html.j2", games=rows, sort=sort, sorts=SORTS)


def _game(s, name: str):
    g = queries.find(s, name)
    if g is None:
        raise HTTPException(404, f"no game {name}")
    return g


def _live_context(request: Request, name: str) -> dict[str, Any]:
    """The page's live part: players, who is in, the board, the results."""
    from judge.templating import render

    with request.app.state.sessions() as s:
        g = _game(s, name)
        page = queries.game_page(s, g)
        board = _board(request, g)
    results_text = None
    if page["results"] is not None and page.get("results_folder"):
        # The method's own results text (templates/results/NAME/offline.txt.j2,
        # what `judge resolve` prints), on the record with names for addresses.
        # A stored resolution never changes: its text is made once (per the
        # players' names, which EJECT or REPLACE may change).
        key = (id(request.app), page["name"], page["resolution_id"],
               tuple((p["name"], p["power"]) for p in page["players"]))
        results_text = _TEXTS.get(key)
        if results_text is None:
            try:
                results_text = render(f"{page['results_folder']}/offline.txt.j2", result=page["results"],
                                      docs_url=request.app.state.config.docs_url)
            except Exception:  # noqa: BLE001 - a text that cannot render: the record itself shows
                results_text = ""
            _TEXTS.put(key, results_text)
    page["results_text"] = results_text
    page["board"] = board
    return page


def _board(request: Request, g) -> dict | None:
    """The method's live board (its LIVE_GAME's public_board), its picture cached by
    its version (a hash of its texts): pictures are drawn once per change."""
    m = queries._method(g)
    if m is None or m.BLIND:
        return None
    shown = driver.public_board(g, queries.public_names(g))
    if not shown:
        return None
    sections = [{"id": str(x.get("id") or k), "title": str(x.get("title") or ""), "text": str(x.get("text") or "")}
                for k, x in enumerate(shown.get("sections") or ())]
    version = hashlib.sha256(json.dumps([shown.get("text") or "", sections]).encode()).hexdigest()[:16]
    # The picture's kind is the web's word (png or svg), never the method's text.
    kind = next((k for k in PICTURES if shown.get(k)), None)
    if kind and _PICTURES.get((g.name, version, kind)) is None:
        draw = shown[kind]
        _PICTURES.put((g.name, version, kind), draw() if callable(draw) else draw)
    return {"text": shown.get("text"), "sections": sections, "version": version, "picture": kind}


class _Cache:
    """A few made things by key, the oldest dropped: board pictures by
    (game, version, kind), the page asks for the one its live part names;
    results texts by resolution."""

    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def put(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def get(self, key):
        with self._lock:
            return self._items.get(key)


_PICTURES = _Cache()
# The pictures a method's board may give (LiveCapability's public_board), by key.
PICTURES = {"png": "image/png", "svg": "image/svg+xml"}
_TEXTS = _Cache()


def game(request: Request) -> HTMLResponse:
    name = request.path_params["name"]
    page = _live_context(request, name)
    fragment = request.app.state.templates.get_template("web/public/live.html.j2").render(game=page)
    return _page(request, "web/public/game.html.j2", game=page, live_html=fragment, version=_version(fragment))


def _version(fragment: str) -> str:
    return hashlib.sha256(fragment.encode()).hexdigest()[:16]


def live(request: Request) -> JSONResponse:
    """The live part alone, and its version: the page polls it and swaps it
    in when the version changes (a bid landed, a player sent a list)."""
    page = _live_context(request, request.path_params["name"])
    fragment = request.app.state.templates.get_template("web/public/live.html.j2").render(game=page)
    return JSONResponse({"version": _version(fragment), "html": fragment, "state": page["state"]},
                        headers={"Cache-Control": "no-store"})


def board_png(request: Request) -> Response:
    return _picture(request, "png")


def board_svg(request: Request) -> Response:
    return _picture(request, "svg")


def _picture(request: Request, kind: str) -> Response:
    name, version = request.path_params["name"], request.query_params.get("v", "")
    picture = _PICTURES.get((name, version, kind))
    if picture is None:
        with request.app.state.sessions() as s:
            g = _game(s, name)
            board = _board(request, g)
        if board is None or board["picture"] != kind:
            raise HTTPException(404, "no board")
        picture = _PICTURES.get((g.name, board["version"], kind))
    headers = {"Cache-Control": "max-age=3600" if version else "no-store", "X-Content-Type-Options": "nosniff"}
    if kind == "svg":
        # Shown by an <img>, an SVG runs no script; opened by itself, it is a
        # document of this site: this policy keeps any script or fetch in it dead.
        headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return Response(picture, media_type=PICTURES[kind], headers=headers)


def resolution_json(request: Request) -> Response:
    with request.app.state.sessions() as s:
        g = _game(s, request.path_params["name"])
        record = queries.public_record(s, g)
    if record is None:
        raise HTTPException(404, "no published record")
    from judge.record import FILENAME, to_bytes

    return Response(to_bytes(record), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{FILENAME}"'})


def _base_url(request: Request) -> str:
    """The site's address for the feeds' links: `[web] public_url`, else the
    address the server listens on (its socket's, never the request's Host
    header, which anyone writes: `Host: evil.example` made links to evil)."""
    configured = request.app.state.config.web_public_url
    if configured:
        return configured
    host, port = request.scope.get("server") or (request.app.state.config.web_host, request.app.state.config.web_port)
    host = f"[{host}]" if ":" in host else host
    return f"{request.scope.get('scheme', 'http')}://{host}:{port}"


def judge_feed(request: Request) -> Response:
    with request.app.state.sessions() as s:
        entries = queries.feed_entries(s)
    body = feed.atom(request.app.state.config, _base_url(request), entries, game=None)
    return Response(body, media_type="application/atom+xml")


def game_feed(request: Request) -> Response:
    with request.app.state.sessions() as s:
        g = _game(s, request.path_params["name"])
        entries = queries.feed_entries(s, g)
        name = g.name
    body = feed.atom(request.app.state.config, _base_url(request), entries, game=name)
    return Response(body, media_type="application/atom+xml")
