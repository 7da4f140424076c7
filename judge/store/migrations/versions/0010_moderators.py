"""moderators (issue 16): the accounts of the web console, a name and a
password hashed as the players' (judge.passwords), made by `judge moderator
add NAME`; the last error of each mail source, for the console's page of
the sources (written by the daemon, read by `judge web`: another process)

Revision ID: 0010
Revises: 0009
"""
from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'moderators',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('password', sa.String(length=200), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_moderators')),
        sa.UniqueConstraint('name', name=op.f('uq_moderators_name')),
    )
    with op.batch_alter_table('source_state', schema=None) as batch_op:
        batch_op.add_column(sa.Column('last_error', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('last_error_at', sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('source_state', schema=None) as batch_op:
        batch_op.drop_column('last_error_at')
        batch_op.drop_column('last_error')
    op.drop_table('moderators')
