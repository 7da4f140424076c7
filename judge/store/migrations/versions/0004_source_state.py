"""source state

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21 16:54:37.657789
"""
from alembic import op
import sqlalchemy as sa



revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('source_state',
    sa.Column('source', sa.String(length=200), nullable=False),
    sa.Column('mailbox', sa.String(length=1000), nullable=False),
    sa.Column('uidvalidity', sa.BigInteger(), nullable=False),
    sa.Column('last_uid', sa.BigInteger(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('source', name=op.f('pk_source_state'))
    )


def downgrade() -> None:
    op.drop_table('source_state')
