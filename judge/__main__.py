"""`python -m judge` is the `judge` command."""

from judge.cli import main

main()
