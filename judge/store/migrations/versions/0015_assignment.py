"""power assignment for real GMs (issue 27): when a Blind Auction's first
deadline closed the bids in, kept once its master gives a new deadline, so
that the new deadline is for the players whose bids were not in (a
replacement, a missing player) and the bids in at the close stand

Revision ID: 0015
Revises: 0014
"""
from alembic import op
import sqlalchemy as sa

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('bids_closed_at', sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('bids_closed_at')
