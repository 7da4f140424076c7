"""the web console's sessions and per-account login failures (issue 25):
a session is a row (web_sessions) that logging out deletes, so a replayed
cookie is refused; a failed login keeps the account tried (a hash of its
name), so that guesses are limited per account as well as per address

Revision ID: 0014
Revises: 0013
"""
from alembic import op
import sqlalchemy as sa

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'web_sessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('token_hash', sa.String(length=64), nullable=False),
        sa.Column('moderator_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['moderator_id'], ['moderators.id'], ondelete='CASCADE',
                                name=op.f('fk_web_sessions_moderator_id_moderators')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_web_sessions')),
        sa.UniqueConstraint('token_hash', name=op.f('uq_web_sessions_token_hash')),
    )
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_sessions_moderator_id'), ['moderator_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_web_sessions_created_at'), ['created_at'], unique=False)
    with op.batch_alter_table('login_failures', schema=None) as batch_op:
        batch_op.add_column(sa.Column('account', sa.String(length=64), nullable=False, server_default=''))
        batch_op.create_index('ix_login_failures_account_failed_at', ['account', 'failed_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('login_failures', schema=None) as batch_op:
        batch_op.drop_index('ix_login_failures_account_failed_at')
        batch_op.drop_column('account')
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_sessions_created_at'))
        batch_op.drop_index(batch_op.f('ix_web_sessions_moderator_id'))
    op.drop_table('web_sessions')
