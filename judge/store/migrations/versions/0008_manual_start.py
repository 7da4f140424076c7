"""nJudge's habits (issue 11): a game's SET MANUAL START (a preference game
otherwise starts by itself when its last player signs on). Observers and
take-over requests are players' statuses ("observer", "takeover"): no
table of their own.

Revision ID: 0008
Revises: 0007
"""
from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('manual_start', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('manual_start')
