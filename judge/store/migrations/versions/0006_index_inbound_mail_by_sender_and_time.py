"""index inbound mail by sender and processing time (the flood cap's count)

The count of a sender's mails in the last hour used the status index (every
processed mail is 'done'), so it read the whole table for every mail: a
backlog cost quadratic time. An index on (sender, processed_at) makes it read
only that sender's last hour; it also serves lookups by sender alone.

Revision ID: 0006
Revises: 0005
"""
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_messages_sender')
        batch_op.create_index('ix_inbound_messages_sender_processed_at', ['sender', 'processed_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_messages_sender_processed_at')
        batch_op.create_index('ix_inbound_messages_sender', ['sender'], unique=False)
