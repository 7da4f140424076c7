"""the outbox's claims: owner and lease (issue 24). A row being sent names
the process sending it (host, pid, a start id: judge/outbox_claims.py) and
holds a lease that the sender renews while it works, so that a starting
judge requeues only the rows of a sender that is gone, never a live one's;
notified_at: when the moderators were last told of a row whose fate is
unknown ("unconfirmed"), for the daily notice

Revision ID: 0013
Revises: 0012
"""
from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('owner', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('lease_until', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('notified_at', sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('notified_at')
        batch_op.drop_column('lease_until')
        batch_op.drop_column('owner')
