"""The client (its address, or IPv6 /64) that created each table and single game, so the tables
and games a restart brings back count against their creator's share.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("client", sa.String(64)))
    with op.batch_alter_table("single_games") as batch:
        batch.add_column(sa.Column("client", sa.String(64)))


def downgrade() -> None:
    with op.batch_alter_table("single_games") as batch:
        batch.drop_column("client")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("client")
