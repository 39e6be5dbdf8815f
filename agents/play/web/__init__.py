"""``manni serve``: play against the agents and replay recorded games in the browser.

- :mod:`.lineup`: which registry agents may sit at a table of each variant, and the default one.
- :mod:`.game`: one game of a person against two agents, and what the person's browser may see.
- :mod:`.store`: the bounded store of games in progress; idle games expire; records are saved.
- :mod:`.replay`: a ``manni-record/1`` game as a list of frames with every hand face up.
- :mod:`.guide`: the landing page's variants (names, one line each) and the rules page.
- :mod:`.library`: the games the server saved, for the replay library.
- :mod:`.app`: the FastAPI application (JSON API + the static page in ``static/``).
- :mod:`.limits`, :mod:`.origin`, :mod:`.connections`: what one request may cost, the Host and
  Origin checks, and the TCP connections' bounds (how many, per client, how long).

Needs the ``web`` extra (FastAPI, uvicorn).
"""
