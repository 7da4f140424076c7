"""The optional authenticated From (issue 9, forged senders): with [auth]
require_authenticated_from, the judge acts only on mail whose From domain
its own MTA vouched for (DMARC, or aligned DKIM or SPF, in an
Authentication-Results header of a trusted authserv-id); a forged From gets
neither action nor reply."""

from __future__ import annotations

from sqlalchemy import select

from judge.games import find_game
from judge.store.models import InboundMessage, OutboxMessage
from tests.harness import Harness

MX = "mx.judge.test"


def _judge(tmp_path, migrated_database_url):
    h = Harness(tmp_path / "data", migrated_database_url)
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "trusted_authserv_ids": (MX,),
                                                 "require_authenticated_from": True})
    return h


def test_forged_from_without_authentication_is_refused_silently(tmp_path, migrated_database_url):
    h = _judge(tmp_path, migrated_database_url)
    try:
        h.mail("gm@good.test", "CREATE ?g gmpw",
               headers={"Authentication-Results": f"{MX}; dkim=pass header.d=good.test; spf=pass smtp.mailfrom=good.test"})
        assert "game ?g created" in h.body(h.last_to("gm@good.test"))
        # Forged: no results, results from another host, or a failed check.
        h.mail("gm@good.test", "SIGNON Mg gmpw\nSET T 100")
        h.mail("gm@good.test", "SIGNON Mg gmpw\nSET T 100",
               headers={"Authentication-Results": "mx.evil.test; dkim=pass header.d=good.test"})
        h.mail("gm@good.test", "SIGNON Mg gmpw\nSET T 100",
               headers={"Authentication-Results": f"{MX}; dkim=fail header.d=good.test; spf=fail smtp.mailfrom=good.test"})
        h.mail("gm@good.test", "SIGNON Mg gmpw\nSET T 100",
               headers={"Authentication-Results": f"{MX}; dkim=pass header.d=evil.test"})
        with h.judge.sessions() as s:
            assert find_game(s, "g").params["T"] != 100
            rows = s.scalars(select(InboundMessage).order_by(InboundMessage.id)).all()
            assert [r.status for r in rows[1:]] == ["ignored"] * 4
            assert len(s.scalars(select(OutboxMessage)).all()) == 1  # only the CREATE's reply
    finally:
        h.close()
