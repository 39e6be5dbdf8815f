"""Tables, their moves and the finished games' records.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("variant", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("seed", sa.String(24), nullable=False),
        sa.Column("chosen_seed", sa.Boolean, nullable=False),
        sa.Column("stand_in", sa.String(200), nullable=False),
        sa.Column("advisor", sa.String(200)),
        sa.Column("hints", sa.Boolean, nullable=False),
        sa.Column("grace_seconds", sa.Float, nullable=False),
        sa.Column("seats", sa.JSON, nullable=False),
        sa.Column("started", sa.Boolean, nullable=False),
        sa.Column("closed", sa.Boolean, nullable=False),
    )
    op.create_table(
        "moves",
        sa.Column("table_id", sa.String(32), sa.ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("n", sa.Integer, primary_key=True),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("action", sa.Integer, nullable=False),
        sa.Column("probabilities", sa.JSON),
        sa.Column("review", sa.JSON),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.String(32), unique=True),
        sa.Column("finished", sa.Float, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("games")
    op.drop_table("moves")
    op.drop_table("tables")
