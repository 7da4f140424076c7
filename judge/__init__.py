"""judge: a play-by-email and play-by-forum judge for Diplomacy-style games."""

__version__ = "0.1.0"
