"""Outgoing mail posted to a Discourse forum.

DiscourseTransport takes a mail that answers a forum post or is addressed to
forum users, and posts its text body as a reply in a topic (POST /posts.json
{"topic_id", "raw"}). The topic comes from, in this order:

1. a header X-Judge-Reply-To: discourse:TOPIC_ID;
2. In-Reply-To <discourse-post-ID@forum host> (the judge's replies carry it):
   GET /posts/ID.json -> topic_id;
3. settings.fallback_topic, with @mentions of the forum recipients.

The transport `publishes` (judge/transports/base.py): a mail marked
private (header X-Judge-Private: yes: a token, or a blind game's power) is
never posted in a topic, where everyone reads it: it goes to its forum
recipients as a new private message (send_private), and its other
recipients go by mail.

Errors: 429, 5xx, 408 and network faults are temporary (Retry-After kept in
the message), other 4xx permanent, as is a mail with no topic to post in.
Discourse has no idempotency key: a mail already posted by this process is not
posted again, but a retry after a crash between the POST and the outbox's
commit may post twice.

DiscourseTransport.route takes the whole mail when it answers a forum post,
else its forum recipients, so that with the transports' CompositeTransport
(judge/transports/composite.py) mail to registered players still goes out
by SMTP/Maildir.
"""

from __future__ import annotations

import email
import email.policy
import logging
import re
from collections.abc import Callable
from email.message import EmailMessage

from judge.sources.discourse.client import DiscourseClient, DiscourseError
from judge.sources.discourse.settings import DiscourseSettings
from judge.transports.base import OutgoingMail, Transport, TransportError, is_private, no_commit_point

log = logging.getLogger(__name__)

_TOPIC_HEADER = re.compile(r"\s*discourse:(\d+)\s*", re.IGNORECASE)
MAX_POST_CHARS = 32000  # Discourse's default max_post_length


class DiscourseTransport(Transport):
    publishes = True  # a topic is read by everyone: private mail goes by send_private

    def __init__(self, settings: DiscourseSettings, name: str | None = None) -> None:
        self.settings = settings
        self.client = DiscourseClient(settings)
        self.name = name or f"discourse:{settings.username}@{settings.host}"
        self._post_re = re.compile(rf"<?discourse-post-(\d+)@{re.escape(settings.host)}>?", re.IGNORECASE)
        self._posted: dict[tuple[str, int], int] = {}  # (message id, topic) -> post id, this process
        self._topics: dict[int, int] = {}  # post id -> topic id

    def describe(self) -> str:
        return f"discourse ({self.settings.base_url} as {self.settings.username}, for forum players)"

    # -- which mail is ours ---------------------------------------------
    @staticmethod
    def _parse(mail: OutgoingMail) -> EmailMessage:
        return email.message_from_bytes(mail.raw, policy=email.policy.default)  # type: ignore[return-value]

    def _topic_header(self, msg: EmailMessage) -> int | None:
        match = _TOPIC_HEADER.fullmatch(str(msg.get("X-Judge-Reply-To") or ""))
        return int(match.group(1)) if match else None

    def _parent_post(self, msg: EmailMessage) -> int | None:
        match = self._post_re.fullmatch(str(msg.get("In-Reply-To") or "").strip())
        return int(match.group(1)) if match else None

    def answers_forum(self, mail: OutgoingMail) -> bool:
        msg = self._parse(mail)
        return self._topic_header(msg) is not None or self._parent_post(msg) is not None

    def route(self, mail: OutgoingMail) -> tuple[str, ...]:
        """The recipients this transport delivers (to CompositeTransport)."""
        if not is_private(self._parse(mail)) and self.answers_forum(mail):
            return tuple(mail.recipients)
        return tuple(r for r in mail.recipients if self.settings.is_forum_address(r))

    # -- sending --------------------------------------------------------
    def _topic_of_post(self, post_id: int) -> int:
        if post_id not in self._topics:
            data = self.client.get(f"/posts/{post_id}.json")
            self._topics[post_id] = int(data["topic_id"])
        return self._topics[post_id]

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        try:
            msg = self._parse(mail)
            text = _body_text(msg)
        except Exception as exc:
            raise TransportError(f"unreadable outgoing mail {mail.message_id}: {exc}", temporary=False) from exc
        if is_private(msg):
            self._send_private(mail, msg, text, commit_point)
            return
        mentions = ""
        try:
            topic = self._topic_header(msg)
            if topic is None:
                parent = self._parent_post(msg)
                if parent is not None:
                    topic = self._topic_of_post(parent)
            if topic is None:
                users = [u for u in map(self.settings.username_of, mail.recipients) if u]
                if self.settings.fallback_topic is None or not users:
                    raise TransportError(f"no Discourse topic for {mail.message_id} to "
                                         f"{', '.join(mail.recipients)}", temporary=False)
                topic = self.settings.fallback_topic
                mentions = " ".join(f"@{u}" for u in users) + "\n\n"
            key = (mail.message_id, topic)
            if key in self._posted:
                log.info("%s: %s already posted as %s", self.name, mail.message_id, self._posted[key])
                return
            raw = (mentions + text).rstrip() or "(empty)"
            if len(raw) > MAX_POST_CHARS:
                raw = raw[:MAX_POST_CHARS - 40].rstrip() + "\n\n[... cut: too long for one post]"
            commit_point()  # from here the forum may have the post
            try:
                result = self.client.post("/posts.json", {"topic_id": topic, "raw": raw})
            except DiscourseError as exc:
                # No HTTP answer at all: the post may exist. An answer (4xx,
                # 5xx, 429) means it was not made and a retry is safe.
                unconfirmed = getattr(exc, "status", None) is None
                raise TransportError(f"Discourse: {exc}", temporary=exc.temporary,
                                     unconfirmed=unconfirmed) from exc
        except DiscourseError as exc:
            raise TransportError(f"Discourse: {exc}", temporary=exc.temporary) from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise TransportError(f"Discourse: unexpected answer ({type(exc).__name__}: {exc})",
                                 temporary=True) from exc
        post_id = result.get("id") if isinstance(result, dict) else None
        self._posted[key] = post_id
        log.info("%s: %s posted in topic %s as post %s", self.name, mail.message_id, topic, post_id)

    def send_private(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        """A new private message to the mail's forum recipients, never a post in a topic."""
        try:
            msg = self._parse(mail)
            text = _body_text(msg)
        except Exception as exc:
            raise TransportError(f"unreadable outgoing mail {mail.message_id}: {exc}", temporary=False) from exc
        self._send_private(mail, msg, text, commit_point)

    def _send_private(self, mail: OutgoingMail, msg: EmailMessage, text: str,
                      commit_point: Callable[[], None]) -> None:
        users = [u for u in map(self.settings.username_of, mail.recipients) if u]
        if not users:
            raise TransportError(f"private mail {mail.message_id} has no forum user among "
                                 f"{', '.join(mail.recipients)}; it is not posted in a topic", temporary=False)
        key = (mail.message_id, 0)  # topic 0: a private message of its own
        if key in self._posted:
            return
        raw = text.rstrip() or "(empty)"
        if len(raw) > MAX_POST_CHARS:
            raw = raw[:MAX_POST_CHARS - 40].rstrip() + "\n\n[... cut: too long for one post]"
        title = str(msg.get("Subject") or "").strip() or "A message of the judge"
        commit_point()
        try:
            result = self.client.post("/posts.json", {"title": title[:200], "raw": raw, "archetype": "private_message",
                                                      "target_recipients": ",".join(users)})
        except DiscourseError as exc:
            raise TransportError(f"Discourse: {exc}", temporary=exc.temporary,
                                 unconfirmed=getattr(exc, "status", None) is None) from exc
        self._posted[key] = result.get("id") if isinstance(result, dict) else None
        log.info("%s: %s sent as a private message to %s", self.name, mail.message_id, ", ".join(users))


def _body_text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    if part is None:
        return ""
    return str(part.get_content()).replace("\r\n", "\n")
