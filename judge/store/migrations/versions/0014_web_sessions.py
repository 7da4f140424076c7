"""the web console's sessions and per-account login failures (issue 25)

Revision ID: 0014
Revises: 0013
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
