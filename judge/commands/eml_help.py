"""HELP [topic]: every command (templates/help/index.txt.j2), or one topic's
page: a method's (HELP preference, by any name SET METHOD accepts) or how
the draws are checked (HELP randomness)."""

from __future__ import annotations

from judge.commands.base import CommandRejected, Context, handles
from judge.methods import METHODS, UnknownMethod, get_method
from judge.syntax import nodes
from judge.templating import render

# Pages that are no method: a mail can say "send HELP RANDOMNESS" where a
# reader may have no copy of the docs.
TOPICS = ("randomness",)
# Another name a reader may try for a topic's page (a method's own are its
# Method's HELP_ALIASES).
TOPIC_ALIASES = {"random-draws": "randomness", "draws": "randomness", "verify": "randomness",
                 "commands": None, "index": None}


def topics() -> list[str]:
    return [*METHODS, *TOPICS]


def page(topic: str | None) -> str:
    """The template of HELP `topic`'s page (None: every command)."""
    if topic is None:
        return "help/index.txt.j2"
    topic = topic.casefold()
    if topic in TOPIC_ALIASES:
        return page(TOPIC_ALIASES[topic])
    for name in METHODS:
        if topic in METHODS[name].HELP_ALIASES:
            return page(name)
    if topic in TOPICS:
        return f"help/{topic}.txt.j2"
    try:
        return f"help/{get_method(topic).NAME}.txt.j2"
    except UnknownMethod:
        raise CommandRejected(f"there is no help on {topic!r}. Send HELP for every command, or HELP and one of: "
                              f"{', '.join(topics())}") from None


@handles(nodes.Help)
def help_(ctx: Context, node: nodes.Help) -> str:
    return render(page(node.topic), judge_address=ctx.config.address, judge_name=ctx.config.name,
                  default_method=ctx.config.default_method, topics=topics(), methods=list(METHODS),
                  docs_url=ctx.config.docs_url).rstrip()
