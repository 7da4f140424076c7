"""commit and reveal: a secret seed and its commitment per game, players' entropy

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 16:33:24.985381
"""
from alembic import op
import sqlalchemy as sa



revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('entropy',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=False),
    sa.Column('player_id', sa.Integer(), nullable=False),
    sa.Column('inbound_id', sa.Integer(), nullable=True),
    sa.Column('received_at', sa.DateTime(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], name=op.f('fk_entropy_game_id_games')),
    sa.ForeignKeyConstraint(['inbound_id'], ['inbound_messages.id'], name=op.f('fk_entropy_inbound_id_inbound_messages')),
    sa.ForeignKeyConstraint(['player_id'], ['players.id'], name=op.f('fk_entropy_player_id_players')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_entropy'))
    )
    with op.batch_alter_table('entropy', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_entropy_game_id'), ['game_id'], unique=False)

    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.add_column(sa.Column('secret_seed', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('commitment', sa.String(length=64), nullable=True))

    with op.batch_alter_table('resolutions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reveal', sa.JSON(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('resolutions', schema=None) as batch_op:
        batch_op.drop_column('reveal')

    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_column('commitment')
        batch_op.drop_column('secret_seed')

    with op.batch_alter_table('entropy', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_entropy_game_id'))

    op.drop_table('entropy')
