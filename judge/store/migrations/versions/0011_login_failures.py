"""login failures (issue 16): the web console's failed logins per client
address, in the store instead of one web process's memory, so that every
web process counts the same failures and a restart forgets none

Revision ID: 0011
Revises: 0010
"""
from alembic import op
import sqlalchemy as sa

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'login_failures',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('address', sa.String(length=100), nullable=False),
        sa.Column('failed_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_login_failures')),
    )
    with op.batch_alter_table('login_failures', schema=None) as batch_op:
        # The limit's count: an address's failures of the last window.
        batch_op.create_index('ix_login_failures_address_failed_at', ['address', 'failed_at'], unique=False)
        # The pruning: every address's failures older than the window.
        batch_op.create_index('ix_login_failures_failed_at', ['failed_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('login_failures', schema=None) as batch_op:
        batch_op.drop_index('ix_login_failures_failed_at')
        batch_op.drop_index('ix_login_failures_address_failed_at')
    op.drop_table('login_failures')
