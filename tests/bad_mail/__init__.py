"""A corpus of malformed and hostile mails for the judge (see corpus.py)."""
