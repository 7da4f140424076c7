"""The judge on the web (docs/web.md): public pages and feeds, and the
moderators' console. Imported only by `judge web` and `judge serve --web`:
`judge deliver` never loads Starlette (tests/test_startup.py)."""
