"""The migrations, oldest first (``down_revision`` links them)."""
