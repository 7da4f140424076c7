"""blinding protocol runs

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 16:44:08.700341
"""
from alembic import op
import sqlalchemy as sa



revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('blind_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('game', sa.String(length=100), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=True),
    sa.Column('gm', sa.String(length=320), nullable=False),
    sa.Column('third_party', sa.String(length=320), nullable=False),
    sa.Column('state', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('finished', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], name=op.f('fk_blind_runs_game_id_games')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_blind_runs'))
    )
    with op.batch_alter_table('blind_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_blind_runs_game_id'), ['game_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('blind_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_blind_runs_game_id'))

    op.drop_table('blind_runs')
