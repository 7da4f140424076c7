"""reserved for issue 29 (speed); no change yet

Revision ID: 0017
Revises: 0016
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
