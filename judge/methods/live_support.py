"""What the shell sides (live.py) of the methods that keep their own state
(LUI, PT3, Payola) share: their words in a template module, who may
send them commands, and a mail with the board's picture."""

from __future__ import annotations

from functools import cache
from typing import Any, Callable


def template_words(path: str, strip: str | None = None) -> tuple[Callable[[], Any], Callable[..., str]]:
    """templates/<path>, a module of macros: (words, w). words() is its
    module, loaded when first asked (a hook that replies nothing loads no
    template), once; w(name, **kw) is its macro `name` as text, stripped of
    `strip` (white space by default)."""

    @cache
    def words() -> Any:
        from judge.templating import environment

        return environment().get_template(path).module

    def w(name: str, **kw: Any) -> str:
        return str(getattr(words(), name)(**kw)).strip(strip)

    return words, w


def may_send(ctx: Any) -> bool:
    """Whether a mail's sender may give the method commands: the GM, or a
    player still in the game (an ejected or replaced one may not)."""
    if ctx.role == "master":
        return True
    return ctx.role == "player" and ctx.player is not None and ctx.player.status == "active"


def mail(session: Any, config: Any, now: Any, game: Any, to: list[str], template: str, *,
         kind: str = "notice", png: bytes | None = None, private: bool = False, **context: Any) -> None:
    """Queues `template` rendered for `game` to `to`, with the board's PNG
    picture attached when there is one (LUI's and PT3's board mails)."""
    from judge.outbox import queue_mail
    from judge.templating import render_mail

    subject, body = render_mail(template, game=game, docs_url=config.docs_url, **context)
    attachments = [(f"{game.name}-board.png", png, "image/png")] if png is not None else []
    queue_mail(session, config, now, to=to, subject=subject, body=body, kind=kind, game_id=game.id,
               attachments=attachments, private=private)
