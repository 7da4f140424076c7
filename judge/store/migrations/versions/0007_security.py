"""security (issue 9): Message-IDs unique per sender, authenticated mail,
raw-mail retention, oversize mail, stuck games, password lockouts, the
submission's own time

Revision ID: 0007
Revises: 0006
"""
from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.add_column(sa.Column('from_key', sa.String(length=320), nullable=False, server_default=''))
        batch_op.add_column(sa.Column('authenticated', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('scrubbed_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('oversize', sa.BigInteger(), nullable=True))
        batch_op.drop_constraint('uq_inbound_messages_message_id', type_='unique')
        batch_op.create_unique_constraint('uq_inbound_messages_message_id_from_key', ['message_id', 'from_key'])
    # The flood notice looks up replies by their inbound mail.
    op.create_index('ix_outbox_inbound_id', 'outbox', ['inbound_id'], unique=False)
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('error', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('stuck_from', sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column('gm_failures', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('gm_backoff_until', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('gm_locked', sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table('players', schema=None) as batch_op:
        batch_op.add_column(sa.Column('failures', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('backoff_until', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('locked', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('password_is_token', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('submitted_at', sa.DateTime(), nullable=True))
    op.execute("UPDATE submissions SET submitted_at = received_at")


def downgrade() -> None:
    op.drop_index('ix_outbox_inbound_id', table_name='outbox')
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('submitted_at')
    with op.batch_alter_table('players', schema=None) as batch_op:
        for name in ('password_is_token', 'locked', 'backoff_until', 'failures'):
            batch_op.drop_column(name)
    with op.batch_alter_table('games', schema=None) as batch_op:
        for name in ('gm_locked', 'gm_backoff_until', 'gm_failures', 'stuck_from', 'error'):
            batch_op.drop_column(name)
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.drop_constraint('uq_inbound_messages_message_id_from_key', type_='unique')
        batch_op.create_unique_constraint('uq_inbound_messages_message_id', ['message_id'])
        for name in ('oversize', 'scrubbed_at', 'authenticated', 'from_key'):
            batch_op.drop_column(name)
