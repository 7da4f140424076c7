"""Reading judge commands: grammars/commands.lark -> frozen dataclasses."""

from judge.syntax.errors import CommandSyntaxError
from judge.syntax.parser import mask_secret, parse_line

__all__ = ["CommandSyntaxError", "mask_secret", "parse_line"]
