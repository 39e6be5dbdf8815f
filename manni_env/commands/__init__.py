"""``manni`` subcommands that belong to the environment package (validate, layout)."""
