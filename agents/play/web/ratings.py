"""Ratings for people and bots on one list: openskill (Plackett-Luce, as the arena's) updated after
every deal from its duplicate result, each seat's points minus its par.

A **player** is a name and a secret token, no password: ``POST /api/players {name, kind}`` (``kind``
``person`` or ``bot``) answers the token once, and the server keeps only its SHA-256. A person
joins a table with it (``player`` in the join), a remote bot connects with it
(``MANNI_PLAYER_TOKEN`` for ``manni bot connect``); the server's agents (``ppo``, ``search``, ...)
are players too, one per spec, made at their first rated deal.

**What is rated.** When a deal ends, the seats with a player (a person or bot who gave a token, and
every agent seat) are one match, ranked by points minus par: the luck of the cards is taken out,
since the seat's par is what the shipped agent makes with the same cards. A deal with no person
or bot player is not rated (agents against agents are the league's work); copies of one agent in
a deal play as separate players and the agent's new rating is their mean, as in the arena. Moves
the stand-in agent made for an absent player count as the player's.

=======  ========================  ===================================================
GET      ``/api/ratings``          ``{players: [{name, kind, mu, sigma, ordinal,
                                   games}]}``, highest ``ordinal`` (mu - 3 sigma) first
POST     ``/api/players``          ``{name, kind}`` → ``{id, name, kind, token}``
GET      ``/leaderboard``          the list as a page
=======  ========================  ===================================================
"""

from __future__ import annotations

import html
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from fastapi import FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from manni_agents.play.web.database import Database, NameTaken
from manni_agents.play.web.limits import client_key
from manni_agents.play.web.tables import clean_name, digest

#: Players listed at most by ``/api/ratings`` and the leaderboard page.
MAX_LISTED = 500
#: Players one client address may make an hour, and the addresses remembered for it.
PLAYERS_PER_HOUR, CLIENTS_KEPT = 20, 10_000


class HourlyBound:
    """At most ``per_hour`` events per client address in any hour (the newest :data:`CLIENTS_KEPT`
    addresses are remembered: memory stays bounded)."""

    def __init__(self, per_hour: int, clock: Callable[[], float] = time.monotonic):
        self.per_hour, self.clock = per_hour, clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str | None) -> bool:
        """Count one event of ``client``; ``False`` (not counted) when it had ``per_hour`` this hour."""
        now = self.clock()
        with self._lock:
            times = self._seen.pop(client or "", None) or deque()
            while times and now - times[0] >= 3600:
                times.popleft()
            allowed = len(times) < self.per_hour
            if allowed:
                times.append(now)
            self._seen[client or ""] = times
            while len(self._seen) > CLIENTS_KEPT:
                self._seen.popitem(last=False)
            return allowed


def _model():
    from openskill.models import PlackettLuce

    return PlackettLuce()


def new_rating() -> tuple[float, float]:
    """The ``(mu, sigma)`` a new player starts from."""
    rating = _model().rating()
    return float(rating.mu), float(rating.sigma)


def rate_deal(db: Database, players: Sequence[int | None], points: Sequence[int], par: Sequence[int],
              source: str, ref: str, deal: int) -> bool:
    """Rate one finished deal: ``players`` by seat (``None``: nobody rated in that seat), their
    ``points`` and the seats' ``par``; whether it was rated (it needs a person's or bot's player
    and one other)."""
    seats = [s for s in range(3) if players[s] is not None]
    with db.rating_lock:  # read, rate and write as one step: two deals ending at once both count
        rows = {p: db.player(player_id=p) for p in {players[s] for s in seats}}
        if len(seats) < 2 or not any(rows[players[s]]["kind"] != "agent" for s in seats):
            return False
        model = _model()
        teams = [[model.rating(mu=rows[players[s]]["mu"], sigma=rows[players[s]]["sigma"])] for s in seats]
        updated = model.rate(teams, scores=[float(points[s] - par[s]) for s in seats])
        ratings = {}
        for player in dict.fromkeys(players[s] for s in seats):
            new = [team[0] for team, s in zip(updated, seats) if players[s] == player]
            ratings[player] = (float(np.mean([r.mu for r in new])), float(np.mean([r.sigma for r in new])))
        db.update_ratings(ratings, [{"player_id": players[s], "source": source, "ref": ref, "deal": deal, "seat": s,
                                     "points": int(points[s]), "par": int(par[s])} for s in seats])
    return True


class NewPlayer(BaseModel):
    """A new player: a name shown on the list, and whether a person or a remote bot."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    kind: Literal["person", "bot"] = "person"


def add_player(db: Database, name: str, kind: str) -> dict:
    """Make a player; its token is in the answer only. :class:`ValueError` for a bad or taken name."""
    shown = clean_name(name, 0)
    if not name.strip() or shown != " ".join(name.split()):
        raise ValueError("a name is 1 to 24 printable characters")
    token = secrets.token_urlsafe(18)
    player_id = db.add_player(shown, kind, digest(token), *new_rating())
    return {"id": player_id, "name": shown, "kind": kind, "token": token}


def listing(db: Database, limit: int) -> list[dict]:
    """The rated players, best first: name, kind, mu, sigma, ordinal and the deals it rests on."""
    return [{"name": r["name"], "kind": r["kind"], "mu": round(r["mu"], 3), "sigma": round(r["sigma"], 3),
             "ordinal": round(r["mu"] - 3 * r["sigma"], 3), "games": r["games"]} for r in db.ratings(limit)]


def add_rating_routes(app: FastAPI, db: Database, players_per_hour: int = PLAYERS_PER_HOUR) -> None:
    """Add the players' and ratings' routes (see the module docstring) to ``app``; one client
    address makes at most ``players_per_hour`` players an hour."""
    bound = HourlyBound(players_per_hour)

    @app.post("/api/players", status_code=201)
    async def new_player(body: NewPlayer, request: Request) -> dict:
        if not bound.take(client_key(request.client.host if request.client else None)):
            raise HTTPException(429, f"{players_per_hour} players an hour is the most one client may make: "
                                "keep your token and play on with it")
        try:
            return await run_in_threadpool(add_player, db, body.name, body.kind)
        except NameTaken as err:
            raise HTTPException(409, str(err)) from None
        except ValueError as err:
            raise HTTPException(400, str(err)) from None

    @app.get("/api/ratings")
    async def ratings(limit: int = Query(100, ge=1, le=MAX_LISTED)) -> dict:
        return {"players": await run_in_threadpool(listing, db, limit)}

    @app.get("/leaderboard", include_in_schema=False)
    async def leaderboard() -> HTMLResponse:
        rows = await run_in_threadpool(listing, db, MAX_LISTED)
        return HTMLResponse(page("Ratings", "People, remote bots and the server's agents on one list: openskill, "
                                 "updated after every deal from points minus par; the list is ordered by "
                                 "mu − 3σ, a rating the player is very likely above.",
                                 ("#", "name", "kind", "mu", "σ", "mu − 3σ", "deals"),
                                 [(k + 1, r["name"], r["kind"], r["mu"], r["sigma"], r["ordinal"], r["games"])
                                  for k, r in enumerate(rows)]))


def page(title: str, intro: str, head: Sequence[str], rows: Sequence[Sequence], extra: str = "") -> str:
    """A small page with one table (every value escaped) and ``extra`` HTML (the server's own), in
    the site's style."""
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    heads = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>{html.escape(title)} · Manni</title><link rel=stylesheet href=/static/style.css></head><body>"
            f"<main><h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>{extra}"
            f"<table class=leaderboard><thead><tr>{heads}</tr></thead><tbody>{cells}</tbody></table>"
            f"<p><a href=/>Play</a></p></main></body></html>")
