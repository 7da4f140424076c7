"""A tiny in-memory Discourse forum speaking the few API calls the judge uses,
on 127.0.0.1 in a thread.

    forum = FakeDiscourse(api_key="k", users=["judge", "ann"])
    with forum:
        t = forum.add_topic("Game ?g", "ann", "first post")
        forum.add_post(t, "bob", "SIGNON ?g pw")
        ...forum.url...
        forum.replies  # posts made through POST /posts.json

Requests without the right Api-Key or with an unknown Api-Username get 403.
fail_next(n, status, retry_after) makes the next n requests fail.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Topic:
    id: int
    title: str
    category_id: int | None = None
    private: bool = False
    allowed: set[str] = field(default_factory=set)  # PM participants
    last_posted_at: str = ""


@dataclass
class Post:
    id: int
    topic_id: int
    post_number: int
    username: str
    raw: str
    created_at: str
    post_type: int = 1


class FakeDiscourse:
    def __init__(self, api_key: str = "secret-key", users: list[str] | tuple[str, ...] = ("judge",), *,
                 page_size: int = 50, chunk_size: int = 20, send_raw: bool = True) -> None:
        self.api_key = api_key
        self.users = set(users)
        self.page_size = page_size
        self.chunk_size = chunk_size
        self.send_raw = send_raw  # False: /t/ID.json posts carry only "cooked"
        self.topics: dict[int, Topic] = {}
        self.posts: dict[int, Post] = {}
        self.replies: list[Post] = []  # made through the API
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path with query, Api-Username)
        self._next_id = 100
        self._clock = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
        self._failures: list[tuple[int, str | None]] = []
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- forum content --------------------------------------------------
    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _now(self) -> str:
        self._clock += timedelta(seconds=1)
        return self._clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add_topic(self, title: str, username: str, raw: str, *, category_id: int | None = None) -> int:
        with self.lock:
            self.users.add(username)
            topic = Topic(self._id(), title, category_id)
            self.topics[topic.id] = topic
            self.add_post(topic.id, username, raw)
            return topic.id

    def add_pm(self, title: str, username: str, to: list[str] | tuple[str, ...], raw: str) -> int:
        with self.lock:
            self.users.add(username)
            self.users.update(to)
            topic = Topic(self._id(), title, None, True, {username, *to})
            self.topics[topic.id] = topic
            self.add_post(topic.id, username, raw)
            return topic.id

    def add_post(self, topic_id: int, username: str, raw: str, *, post_type: int = 1) -> int:
        with self.lock:
            self.users.add(username)
            topic = self.topics[topic_id]
            number = sum(1 for p in self.posts.values() if p.topic_id == topic_id) + 1
            post = Post(self._id(), topic_id, number, username, raw, self._now(), post_type)
            self.posts[post.id] = post
            topic.last_posted_at = post.created_at
            return post.id

    def topic_posts(self, topic_id: int) -> list[Post]:
        with self.lock:
            return sorted((p for p in self.posts.values() if p.topic_id == topic_id), key=lambda p: p.id)

    def fail_next(self, n: int, status: int = 429, retry_after: str | None = "7") -> None:
        with self.lock:
            self._failures += [(status, retry_after)] * n

    # -- JSON shapes ----------------------------------------------------
    def _post_json(self, post: Post, *, with_topic: bool = False, raw: bool = True) -> dict[str, Any]:
        topic = self.topics[post.topic_id]
        out: dict[str, Any] = {"id": post.id, "topic_id": post.topic_id, "post_number": post.post_number,
                               "username": post.username, "created_at": post.created_at,
                               "post_type": post.post_type, "cooked": f"<p>{post.raw}</p>"}
        if raw:
            out["raw"] = post.raw
        if with_topic:
            out["topic_title"] = topic.title
            out["category_id"] = topic.category_id
        return out

    def _visible(self, topic: Topic, user: str) -> bool:
        return not topic.private or user in topic.allowed

    def handle(self, method: str, path: str, query: dict[str, list[str]], user: str,
               body: dict[str, Any] | None) -> tuple[int, Any]:
        with self.lock:
            if method == "GET" and path == "/posts.json":
                before = int(query["before"][0]) if "before" in query else None
                posts = sorted((p for p in self.posts.values() if not self.topics[p.topic_id].private
                                and (before is None or p.id < before)), key=lambda p: -p.id)
                return 200, {"latest_posts": [self._post_json(p, with_topic=True)
                                              for p in posts[:self.page_size]]}
            if method == "GET" and path.startswith("/posts/") and path.endswith(".json"):
                post = self.posts.get(_int(path[len("/posts/"):-len(".json")]))
                if post is None or not self._visible(self.topics[post.topic_id], user):
                    return 404, {"errors": ["not found"]}
                return 200, self._post_json(post, with_topic=True)
            if method == "GET" and path.startswith("/topics/private-messages/") and path.endswith(".json"):
                who = urllib.parse.unquote(path[len("/topics/private-messages/"):-len(".json")])
                if who != user:
                    return 403, {"errors": ["not allowed"]}
                topics = sorted((t for t in self.topics.values() if t.private and who in t.allowed),
                                key=lambda t: t.last_posted_at, reverse=True)
                return 200, {"topic_list": {"topics": [
                    {"id": t.id, "title": t.title, "last_posted_at": t.last_posted_at} for t in topics]}}
            if method == "GET" and path.startswith("/t/"):
                rest = path[len("/t/"):]
                if rest.endswith("/posts.json"):
                    topic = self.topics.get(_int(rest[:-len("/posts.json")]))
                    if topic is None or not self._visible(topic, user):
                        return 404, {"errors": ["not found"]}
                    wanted = {_int(i) for i in query.get("post_ids[]", [])}
                    posts = [p for p in self.topic_posts(topic.id) if p.id in wanted]
                    return 200, {"post_stream": {"posts": [self._post_json(p, raw=self.send_raw) for p in posts]}}
                if rest.endswith(".json"):
                    topic = self.topics.get(_int(rest[:-len(".json")]))
                    if topic is None or not self._visible(topic, user):
                        return 404, {"errors": ["not found"]}
                    posts = self.topic_posts(topic.id)
                    return 200, {"id": topic.id, "title": topic.title, "post_stream": {
                        "posts": [self._post_json(p, raw=self.send_raw) for p in posts[:self.chunk_size]],
                        "stream": [p.id for p in posts]}}
            if method == "POST" and path == "/posts.json":
                if not isinstance(body, dict):
                    return 400, {"errors": ["bad JSON"]}
                if body.get("archetype") == "private_message":
                    # A new private message: a private topic for its author
                    # and target_recipients (comma-separated usernames).
                    targets = [t for t in str(body.get("target_recipients") or "").split(",") if t]
                    raw = str(body.get("raw") or "")
                    if not targets or not str(body.get("title") or "").strip() or len(raw.strip()) < 2:
                        return 422, {"errors": ["a private message needs a title, recipients and a body"]}
                    topic_id = self.add_pm(str(body["title"]), user, targets, raw)
                    post = self.topic_posts(topic_id)[0]
                    self.replies.append(post)
                    return 200, self._post_json(post)
                topic = self.topics.get(_int(str(body.get("topic_id"))))
                if topic is None or not self._visible(topic, user):
                    return 404, {"errors": ["topic not found"]}
                raw = str(body.get("raw") or "")
                if len(raw.strip()) < 2:
                    return 422, {"errors": ["Body is too short"]}
                post_id = self.add_post(topic.id, user, raw)
                self.replies.append(self.posts[post_id])
                return 200, self._post_json(self.posts[post_id])
            return 404, {"errors": ["no such route"]}

    # -- server ---------------------------------------------------------
    def start(self) -> FakeDiscourse:
        forum = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _serve(self, method: str) -> None:
                parts = urllib.parse.urlsplit(self.path)
                user = self.headers.get("Api-Username")
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                with forum.lock:
                    forum.requests.append((method, self.path, user))
                    failure = forum._failures.pop(0) if forum._failures else None
                headers: dict[str, str] = {}
                if failure is not None:
                    status, payload = failure[0], {"errors": ["injected failure"]}
                    if failure[1] is not None:
                        headers["Retry-After"] = failure[1]
                elif self.headers.get("Api-Key") != forum.api_key or user not in forum.users:
                    status, payload = 403, {"errors": ["You are not permitted to view the requested resource."]}
                else:
                    try:
                        body = json.loads(data) if data else None
                    except ValueError:
                        body = None
                    try:
                        status, payload = forum.handle(method, parts.path, urllib.parse.parse_qs(parts.query),
                                                       user, body)
                    except Exception as exc:  # noqa: BLE001 - a bug in the fake: show it as a 500
                        status, payload = 500, {"errors": [repr(exc)]}
                out = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-discourse", daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the forum first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1
