"""Bots: programs in any language that play through the ``manni-bot/1`` protocol
(docs/bot-protocol.md). :mod:`.protocol` writes and reads its messages, :mod:`.process` runs a
bot's process with bounded reads, :mod:`.agent` is the ``bot:`` player of the registry and
:mod:`.check` the checker of ``manni bot check``."""
