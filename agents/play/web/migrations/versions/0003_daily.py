"""The daily duplicate challenge: each player's entry on each deal of a day, and the server's
settings (its secret that the days' deals are dealt from).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("key", sa.String(32), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "daily_entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("deal", sa.Integer, nullable=False),
        sa.Column("player_id", sa.Integer, sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False),
        sa.Column("table_id", sa.String(32), nullable=False, unique=True),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("points", sa.Integer),
        sa.Column("par", sa.Integer),
        sa.Column("started", sa.Float, nullable=False),
        sa.Column("finished", sa.Float),
        sa.UniqueConstraint("day", "deal", "player_id", name="uq_daily_once"),
    )
    op.create_index("ix_daily_entries_day", "daily_entries", ["day", "deal"])


def downgrade() -> None:
    op.drop_index("ix_daily_entries_day", "daily_entries")
    op.drop_table("daily_entries")
    op.drop_table("settings")
