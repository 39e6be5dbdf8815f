"""People's play: at the terminal (:mod:`.terminal`, ``manni play``, with :mod:`.human`, the person's seat) and in the browser (:mod:`.web`,
``manni serve``: games against agents, replays and tables of several people)."""
