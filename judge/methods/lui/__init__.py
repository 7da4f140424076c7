"""Lowest Unique Integer (method `lui`, issue 13): a real-time seat auction.

Rules: ../shared/seeds/lowest-unique-integer.txt; as implemented, with every
choice made where the seed is silent: docs/lui.md. The package holds the pure
parts only, none of which does I/O, reads a clock or draws at random:

- board.py: the wrap-around board, its seat letters and each seat's four
  neighbours;
- settings.py: every number of the game as a setting, the presets F11 and F8,
  and the prize table (a placeholder until the GM sets it);
- tiebreak.py: the MM2 priority tiebreak;
- commands.py (with grammars/lui.lark): a line of a mail -> a command;
- engine.py: the state machine (state + command -> state and events; state +
  clock -> state and events; the next time it wants the clock);
- replay.py: a whole game from a JSON log, with no database (`judge resolve`).

The shell (store, scheduler, mail, board pictures) wraps these; nothing here
imports it.
"""
