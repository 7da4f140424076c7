"""What the shell sides (live.py) of the methods that keep their own state
(LUI, PT3, Payola) share: their words in a template module, and who may
send them commands."""

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
