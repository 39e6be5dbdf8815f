"""The daily duplicate challenge: each day (UTC) the same :data:`DEALS` deals for everybody, each
played by a person or a remote bot against two copies of the shipped agent, and scored against par
and against every other result on the same deal, as in bridge's duplicate tournaments.

**The deals.** Deal ``k`` of a day is one deal of Hornafjarðarmanni, dealt from a seed that is an
HMAC of ``k`` under the *day's secret*, itself an HMAC of the date under the server's secret
(made at the first start and kept in the database). No page shows a day's secret before the day
is over; ``GET /api/daily?day=`` of a past day shows it, so anyone can check that day's seeds
(:func:`deal_seed`). Deal ``k`` is played from seat ``(k - 1) % 3``.

**Playing.** A player (a name and a token, :mod:`.ratings`) asks for its next deal
(``POST /api/daily/deals``): the server deals it at a new table of its own, the player in the
deal's seat (a person's, or a remote bot's for a bot player), and answers the table and seat
token; the table is played like any other (the page, or ``manni bot connect``). A deal is
played once: asking again gives the next one, and a deal started and left is lost. Nobody sees
a deal before playing it: its cards are only at the player's own table.

**Scores.** A result is the seat's points minus par (what the shipped agent makes in that seat
with the same cards) and, against every other result on the same deal, matchpoints: the share of
the others it beats, a tie counting half, in percent (50 when alone). The day's leaderboard
sums the points minus par and averages the matchpoints. Once a player has finished a deal they
see every result on it and its replays (``Authorization: Bearer TOKEN``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Annotated

from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from manni_agents.base import close_policies
from manni_agents.play.web.database import Database
from manni_agents.play.web.limits import ReplayGuard, client_key
from manni_agents.play.web.ratings import page
from manni_agents.play.web.store import StoreFull
from manni_agents.play.web.tables import BOT, PERSON, Table, TableStore, digest
from manni_env.rules import make_rules

#: Deals a day, and the variant they are dealt in (one deal each: ``max_deals=1``).
DEALS, VARIANT = 8, "hornafjardar"
#: Seconds a player away from a daily deal keeps it before it is lost.
GRACE_SECONDS = 600.0
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: A ``?day=YYYY-MM-DD`` parameter (default: today).
Day = Annotated[str | None, Query(pattern=DAY.pattern)]


def utc_today() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


def day_secret(server_secret: bytes, day: str) -> str:
    """The secret of ``day`` (``YYYY-MM-DD``), in hex: shown once the day is over."""
    return hmac.new(server_secret, f"manni daily {day}".encode(), hashlib.sha256).hexdigest()


def deal_seed(secret: str, deal: int) -> int:
    """The 63-bit seed of deal ``deal`` (from 1) of the day whose secret is ``secret``."""
    digest_ = hmac.new(bytes.fromhex(secret), f"deal {deal}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest_[:8], "big") >> 1


def seat_of(deal: int) -> int:
    """The seat deal ``deal`` is played from."""
    return (deal - 1) % 3


def matchpoints(scores: list[float]) -> list[float]:
    """Each score's share of the others it beats, a tie counting half, in percent (50 alone)."""
    if len(scores) < 2:
        return [50.0] * len(scores)
    return [round(100 * (sum((s > o) + 0.5 * (s == o) for o in scores) - 0.5) / (len(scores) - 1), 1)
            for s in scores]


class Daily:
    """Today's challenge over the database, the tables and the shipped agent ``agent``."""

    def __init__(self, db: Database, tables: TableStore, agent: str, deals: int = DEALS,
                 today: Callable[[], dt.date] | None = None):
        if deals < 1:
            raise ValueError("the daily challenge needs at least 1 deal")
        self.db, self.tables, self.agent, self.deals = db, tables, agent, deals
        self.today = today if today is not None else lambda: utc_today()
        self.secret = bytes.fromhex(db.setting("daily_secret", lambda: secrets.token_hex(32)))
        self.rules = make_rules(VARIANT, max_deals=1)
        self.lock = threading.Lock()

    def status(self, day: str | None = None) -> dict:
        """What the day's challenge is and where it stands (see the module docstring)."""
        today = self.today().isoformat()
        day = _checked(day) if day else today
        if day > today:
            raise LookupError(f"{day} has not begun: its deals are not dealt yet")
        entries = self.db.entries(day)
        done = [e for e in entries if e["finished"] is not None]
        over = day < today
        return {
            "day": day, "variant": VARIANT, "deals": self.deals, "seats": [seat_of(k) for k in range(1, self.deals + 1)],
            "over": over, "ends_at": f"{dt.date.fromisoformat(day) + dt.timedelta(days=1)}T00:00:00Z",
            "secret": day_secret(self.secret, day) if over else None,
            "entries": [{"deal": k, "finished": sum(e["deal"] == k for e in done),
                         "playing": sum(e["deal"] == k and e["finished"] is None for e in entries)}
                        for k in range(1, self.deals + 1)],
            "leaderboard": leaderboard(done),
        }

    def start(self, player: dict, client: str | None = None) -> dict:
        """Deal ``player`` its next deal of today at a new table: ``{day, deal, table, seat, token}``;
        ``ValueError`` when it has played them all. The table counts against ``client``'s tables
        in progress (:class:`~manni_agents.play.web.store.StoreFull` beyond)."""
        day = self.today().isoformat()
        with self.lock:
            played = {e["deal"] for e in self.db.entries(day) if e["player_id"] == player["id"]}
            deal = next((k for k in range(1, self.deals + 1) if k not in played), None)
            if deal is None:
                raise ValueError(f"you have played all {self.deals} deals of {day}: a new challenge starts at "
                                 "midnight UTC")
            seat = seat_of(deal)
            specs = [self.agent] * 3
            specs[seat] = BOT if player["kind"] == "bot" else PERSON
            table = Table(self.rules, specs, stand_in=self.agent, grace_seconds=GRACE_SECONDS)
            table._deal(self.rules, deal_seed(day_secret(self.secret, day), deal))  # not a chosen seed: never shown
            try:
                table_id = self.tables.add(table, client)
            except StoreFull:  # a refused table stops its agents
                close_policies(table.policies.values())
                raise
            try:
                self.db.add_entry(day, deal, player["id"], table_id, seat)
            except ValueError:  # started meanwhile by another server process
                self.tables.finish(table_id)
                raise
            _, token = table.join(player["name"], player["kind"] == "bot", player["id"])
        return {"day": day, "deal": deal, "of": self.deals, "table": table_id, "seat": seat, "token": token,
                "invite": f"/#table={table_id}"}

    def results(self, player: dict, deal: int, day: str | None = None) -> list[dict]:
        """Every finished result on deal ``deal`` of ``day`` (default today), once ``player`` finished it."""
        day = _checked(day) if day else self.today().isoformat()
        entries = [e for e in self.db.entries(day) if e["deal"] == deal]
        if not any(e["player_id"] == player["id"] and e["finished"] is not None for e in entries):
            raise PermissionError(f"finish deal {deal} of {day} first: its results and replays open then")
        done = [e for e in entries if e["finished"] is not None]
        points = matchpoints([e["points"] - e["par"] for e in done])
        rows = [{"name": e["name"], "kind": e["kind"], "seat": e["seat"], "points": e["points"], "par": e["par"],
                 "score": e["points"] - e["par"], "matchpoints": mp, "replay": f"/api/daily/replays/{e['id']}"}
                for e, mp in zip(done, points)]
        return sorted(rows, key=lambda r: -r["matchpoints"])

    def record(self, player: dict, entry_id: int, day: str) -> dict:
        """The record of a finished entry on a deal ``player`` finished too."""
        entry = next((e for e in self.db.entries(day) if e["id"] == entry_id and e["finished"] is not None), None)
        if entry is None:
            raise LookupError(f"no finished result {entry_id} on {day}")
        self.results(player, entry["deal"], day)  # PermissionError unless the player finished that deal
        record = self.db.game_record(entry["table_id"])
        if record is None:
            raise LookupError(f"the game of result {entry_id} is not kept")
        return record


def _checked(day: str) -> str:
    """``day`` if it is a date ``YYYY-MM-DD``; else :class:`LookupError`."""
    try:
        return dt.date.fromisoformat(day).isoformat()
    except ValueError:
        raise LookupError(f"{day!r} is not a day: YYYY-MM-DD") from None


def leaderboard(done: list[dict]) -> list[dict]:
    """The day's players, best total of points minus par first, with their mean matchpoints."""
    by_deal: dict[int, list[dict]] = defaultdict(list)
    for e in done:
        by_deal[e["deal"]].append(e)
    rows: dict[int, dict] = {}
    for entries in by_deal.values():
        for e, mp in zip(entries, matchpoints([e["points"] - e["par"] for e in entries])):
            row = rows.setdefault(e["player_id"], {"name": e["name"], "kind": e["kind"], "deals": 0, "score": 0,
                                                  "matchpoints": 0.0})
            row["deals"] += 1
            row["score"] += e["points"] - e["par"]
            row["matchpoints"] += mp
    for row in rows.values():
        row["matchpoints"] = round(row["matchpoints"] / row["deals"], 1)
    return sorted(rows.values(), key=lambda r: (-r["score"], -r["matchpoints"]))


class Start(BaseModel):
    model_config = ConfigDict(extra="forbid")
    player: str = Field(max_length=100)


def add_daily_routes(app: FastAPI, daily: Daily, hub, replays: ReplayGuard) -> None:
    """Add the daily challenge's routes to ``app`` (``hub``: the tables' connections, which runs
    the grace period of the new tables)."""
    def player_of(token: str) -> dict:
        player = daily.db.player(token=digest(token))
        if player is None or player["kind"] == "agent":
            raise HTTPException(404, "unknown player token: make a player with POST /api/players first")
        return player

    def bearer(request: Request) -> dict:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token or len(token) > 100:
            raise HTTPException(401, "send your player token: Authorization: Bearer TOKEN")
        return player_of(token.strip())

    @app.get("/api/daily")
    async def status(day: Day = None) -> dict:
        try:
            return await run_in_threadpool(daily.status, day)
        except LookupError as err:
            raise HTTPException(404, str(err)) from None

    @app.post("/api/daily/deals", status_code=201)
    async def start(body: Start, request: Request) -> dict:
        def run() -> dict:
            return daily.start(player_of(body.player), client_key(request.client.host if request.client else None))
        try:
            started = await run_in_threadpool(run)
        except StoreFull as err:
            raise HTTPException(429, str(err)) from None
        except ValueError as err:
            raise HTTPException(409, str(err)) from None
        table = daily.tables.get(started["table"])
        hub.schedule(started["table"], table)
        return started

    @app.get("/api/daily/deals/{deal}")
    async def results(deal: Annotated[int, PathParam(ge=1, le=1000)], request: Request, day: Day = None) -> dict:
        player = await run_in_threadpool(bearer, request)
        try:
            return {"deal": deal, "results": await run_in_threadpool(daily.results, player, deal, day)}
        except PermissionError as err:
            raise HTTPException(403, str(err)) from None
        except LookupError as err:
            raise HTTPException(404, str(err)) from None

    @app.get("/api/daily/replays/{entry_id}")
    async def replay(entry_id: Annotated[int, PathParam(ge=1, lt=2**62)], request: Request, day: Day = None) -> dict:
        player = await run_in_threadpool(bearer, request)
        try:
            record = await run_in_threadpool(daily.record, player, entry_id, day or daily.today().isoformat())
        except PermissionError as err:
            raise HTTPException(403, str(err)) from None
        except LookupError as err:
            raise HTTPException(404, str(err)) from None
        return await run_in_threadpool(replays.build, record)

    @app.get("/daily", include_in_schema=False)
    async def daily_page() -> HTMLResponse:
        now = await run_in_threadpool(daily.status, None)
        rows = [(k + 1, r["name"], r["kind"], r["deals"], r["score"], r["matchpoints"])
                for k, r in enumerate(now["leaderboard"])]
        return HTMLResponse(page(f"Daily challenge {now['day']}",
                                 f"{now['deals']} deals of Hornafjarðarmanni, the same for everybody, each against "
                                 "two copies of the shipped agent; scored by points minus par and matchpoints "
                                 "against every other result on the deal.",
                                 ("#", "name", "kind", "deals", "points − par", "matchpoints %"), rows,
                                 extra=PLAY_FORM))


#: The daily page's form: make a player once (kept in the browser), then play the next deal at its table.
PLAY_FORM = """<form id=daily-play><label id=daily-name-label>Your name <input id=daily-name maxlength=24 required></label>
<button>Play the next deal</button></form><p id=daily-error role=alert></p><script>
if (localStorage.getItem("manni-player")) {  // a player already: no name to give
  document.getElementById("daily-name").required = false;
  document.getElementById("daily-name-label").hidden = true;
}
document.getElementById("daily-play").addEventListener("submit", async (event) => {
  event.preventDefault();
  const say = (text) => { document.getElementById("daily-error").textContent = text; };
  const post = async (path, body) => {
    const answer = await fetch(path, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)});
    const data = await answer.json();
    if (!answer.ok) throw new Error(data.error);
    return data;
  };
  try {
    let token = localStorage.getItem("manni-player");
    if (!token) {
      token = (await post("/api/players", {name: document.getElementById("daily-name").value, kind: "person"})).token;
      localStorage.setItem("manni-player", token);
    }
    const deal = await post("/api/daily/deals", {player: token});
    localStorage.setItem(`manni-table-${deal.table}`, deal.token);
    location.href = deal.invite;
  } catch (err) { say(err.message); }
});
</script>"""
