"""Reading judge commands: grammars/commands.lark -> frozen dataclasses."""

from judge.syntax.errors import CommandSyntaxError
from judge.syntax.parser import parse_line

__all__ = ["CommandSyntaxError", "parse_line"]
