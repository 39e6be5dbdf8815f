"""``manni`` subcommands that belong to the agents package (arena, play)."""
