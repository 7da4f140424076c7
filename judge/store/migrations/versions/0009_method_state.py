"""The method interface (issue 13): a method with a state of its own (LUI's
board, bids and timers) keeps it in games.method_state (JSON, as the method
writes it), and the next time it wants a tick in games.next_tick, a row the
scheduler fires with its own time (also after a restart).

Revision ID: 0009
Revises: 0008
"""
from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('method_state', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('next_tick', sa.DateTime(), nullable=True))
        batch_op.create_index('ix_games_next_tick', ['next_tick'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index('ix_games_next_tick')
        batch_op.drop_column('next_tick')
        batch_op.drop_column('method_state')
