"""LUI's offline part registered for tests/test_method_interface.py only."""

from tests.toy_method import METHOD_LUI as METHOD  # noqa: F401
