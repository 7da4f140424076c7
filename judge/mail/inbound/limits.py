"""The bounds that keep the reading of a mail linear in its size, whatever
its shape (tests/security/test_inbound_linear_time.py,
tests/security/test_inbound_depth.py). No real mail comes near any of them."""

from __future__ import annotations

# Deeper MIME nesting than this is not a real mail; stop walking instead of
# spending time (or recursion) on it.
_MAX_MIME_DEPTH = 50
_MAX_PARTS = 500
_MAX_ID_BYTES = 998
# The email package's header registry (policy.default) slices its input once
# per token, so its cost grows with the square of a header's length; header
# values longer than this are decoded by hand instead (linear; the same
# result for all but odd shapes). No real header comes near it.
_MAX_REGISTRY_CHARS = 2000
# Likewise its MIME parse re-reads every MIME header at each access: a mail
# whose odd (non-plain) MIME headers are longer than this, all together, is
# read with compat32 alone.
_MAX_RICH_MIME_CHARS = 8000
