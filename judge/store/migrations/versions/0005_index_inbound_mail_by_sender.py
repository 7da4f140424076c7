"""index inbound mail by sender

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21 17:21:10.851911
"""
from alembic import op



revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_inbound_messages_sender'), ['sender'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('inbound_messages', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_inbound_messages_sender'))

