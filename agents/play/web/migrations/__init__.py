"""Alembic migrations of ``manni serve``'s database (:mod:`manni_agents.play.web.database`)."""
