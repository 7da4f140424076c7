"""PostgreSQL: the outbox's raw mails compressed with lz4, where the server
has it (issue 29, the burst): a deadline of 500 games stores 4,500 mails of
about 13 KB, and the server's default (pglz) spent more time compressing
them than storing them (lz4: about a third of it, for a little more room).
Only mails stored from now on; SQLite stores them as they are.

Revision ID: 0018
Revises: 0017
"""
from alembic import op
import sqlalchemy as sa

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

# PostgreSQL 14 and later, built with lz4 (a value this setting may take).
_HAS_LZ4 = "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"


def _lz4() -> bool:
    bind = op.get_bind()
    return bind.dialect.name == "postgresql" and bool(bind.execute(sa.text(_HAS_LZ4)).scalar())


def upgrade() -> None:
    if _lz4():
        op.execute("ALTER TABLE outbox ALTER COLUMN raw SET COMPRESSION lz4")


def downgrade() -> None:
    if _lz4():
        op.execute("ALTER TABLE outbox ALTER COLUMN raw SET COMPRESSION DEFAULT")
