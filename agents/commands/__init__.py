"""``manni`` subcommands that need agents (simulate, arena, play); declared as ``manni.commands`` entry points."""
