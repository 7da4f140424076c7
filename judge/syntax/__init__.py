"""Reading judge commands: grammars/commands.lark -> frozen dataclasses."""

from judge.syntax.errors import CommandSyntaxError
from judge.syntax.parser import looks_like_command, mask_secret, parse_line

__all__ = ["CommandSyntaxError", "looks_like_command", "mask_secret", "parse_line"]
