"""Alembic's environment for ``manni serve``'s database: migrations run on the connection that
:func:`manni_agents.play.web.database.migrate` passes in (no alembic.ini, no URL here)."""

from alembic import context

from manni_agents.play.web.database import METADATA

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=METADATA, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
