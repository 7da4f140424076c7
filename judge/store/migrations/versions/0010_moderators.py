"""moderators (issue 16): the accounts of the web console, a name and a
password hashed as the players' (judge.passwords), made by `judge moderator
add NAME`

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


def downgrade() -> None:
    op.drop_table('moderators')
