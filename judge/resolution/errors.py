"""The error of a resolver file that cannot be used."""


class ResolveInputError(ValueError):
    """The message says which field is wrong and why."""
