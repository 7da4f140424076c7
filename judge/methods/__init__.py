"""The methods: one package each (judge/methods/NAME/), found by name
through judge.methods.registry; what a package provides is
judge.methods.interface (docs/architecture.md)."""

from judge.methods.registry import ALIASES, METHODS, UnknownMethod, get_method, method_of

__all__ = ["ALIASES", "METHODS", "UnknownMethod", "get_method", "method_of"]
