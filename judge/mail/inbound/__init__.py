"""Read one raw inbound mail into the few facts the judge acts on.

parse_message() is the border between the hostile outside world and the judge:
whatever bytes arrive (spam, broken MUAs, fuzzers), it returns an InboundMail and
never raises. Every step is guarded on its own so one broken header costs only
that field, and each oddity is written into `problems` for the logs.

All text fields are clean Python strings: no lone surrogates (8-bit header bytes
are decoded as UTF-8, else Latin-1) and no NUL characters, because both would
break storing them later.

Speed: the mail is parsed with the cheap compat32 policy (headers stay plain
strings) and the few headers the judge reads are decoded here. The results are
those of the rich `policy.default` header registry, which is what the judge
used to parse with, but that registry costs about a millisecond per mail. So
every header value of an ordinary shape (plain text, well-formed RFC 2047
words, "Name <address>", a plain Message-ID or Date) is decoded by a small
exact fast path, and anything else is handed to `policy.default` for just that
header, as before. Likewise the MIME tree: when any part's Content-Type,
Content-Transfer-Encoding or Content-Disposition is not of a plain shape (RFC
2231 parameters, comments, quoted-pairs, encoded words, 8-bit bytes...), the
mail is parsed again with `policy.default`, because that policy reads those
headers slightly differently and might cut the parts elsewhere.
The one intended difference: see fast_headers._fast_phrase (white space
between two encoded words in a display name).

Identity: the sender is not the registry's reading but the addr-spec of the
one mailbox of the one From header, read strictly as RFC 5322 writes it
(from_address()): no address out of a display name, a comment or a decoded
encoded word, no lenient guess; several From headers or mailboxes give none.

Cost: linear in the size of the mail, whatever its shape. The email
package's slow spots are kept away: its parser stops at the first MIME part
nested deeper than _MAX_MIME_DEPTH (the mail is then answered with
InboundMail.refusal), its MIME parameter split is replaced by a one-pass
one, and its header registry and decode_header(), quadratic in a header's
length, only see values of up to _MAX_REGISTRY_CHARS (longer ones are
decoded by hand) and MIME headers of up to _MAX_RICH_MIME_CHARS in all.
tests/security/test_inbound_linear_time.py holds the shapes that were not.

The package, one module per part of the reading:
  parse                   parse_message() and InboundMail: the steps in order
  mime                    the bounded MIME parse, plain MIME headers, the walk over the parts
  headers                 the headers as the judge reads them (fast path, registry, by hand)
  fast_headers            the exact fast readers of ordinary header values
  encoded_words           RFC 2047 words decoded by hand (decode_raw_header)
  sender                  the From address (RFC 5322, from_address) and the display name
  authentication_results  RFC 8601: did the judge's mail server vouch for the From domain?
  body                    the text of the mail: its part, charset, format=flowed, HTML
  charsets                bytes to text (decode_bytes), text safe to store (clean_text)
  auto_replies            mail not to answer: loops, auto-replies, bounces, bulk, lists
  message_ids             Message-IDs, and the key a mail is stored under (dedup_key_of)
  guard                   one guarded step: its failure a problem, not an exception
  limits                  the bounds that keep all of it linear
"""

from __future__ import annotations

from judge.mail.inbound.charsets import clean_text, decode_bytes
from judge.mail.inbound.encoded_words import decode_raw_header
from judge.mail.inbound.message_ids import dedup_key_of, synthetic_message_id
from judge.mail.inbound.parse import InboundMail, parse_message
from judge.mail.inbound.sender import from_address

__all__ = [
    "InboundMail",
    "clean_text",
    "decode_bytes",
    "decode_raw_header",
    "dedup_key_of",
    "from_address",
    "parse_message",
    "synthetic_message_id",
]
