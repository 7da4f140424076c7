"""a game's job (issue 24): START, PROCESS or the start by itself asked by
mail, done as a job of its own under the game's lock (judge.scheduler), not
in the mail's transaction, so that a heavy draw holds up no other mail

Revision ID: 0017
Revises: 0015
"""
from alembic import op
import sqlalchemy as sa

revision = '0017'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('job', sa.String(length=20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('job')
