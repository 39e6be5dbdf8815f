// Tables for people: create a table, join it by its invite link, play over a WebSocket that the
// server pushes each seat's own view through, with hints and the review of each deal. Uses the
// helpers of app.js (loaded after this file; everything here runs after it has loaded).
"use strict";

let tableView = null;  // the open table: {id, token, seat, ws, move(actions)}

const tokenKey = (id) => `manni-table-${id}`;

function fillTableSeats() {
  const menu = options.agents[$("variant").value];
  for (const id of ["t-seat1", "t-seat2"]) {
    const select = $(id);
    select.replaceChildren(el("option", "", "person (invite)"), el("option", "", "remote bot (manni bot connect)"),
      ...menu.choices.map((spec) => el("option", "", spec)));
    select.options[0].value = "person";
    select.options[1].value = "bot";
    select.value = id === "t-seat1" ? "person" : menu.default;
  }
}

async function createTable(event) {
  event.preventDefault();
  await guarded(async () => {
    const body = {
      variant: $("variant").value,
      seats: ["person", $("t-seat1").value, $("t-seat2").value],
      hints: $("t-hints").checked,
    };
    if ($("target").value && !$("target-label").hidden) body.target = Number($("target").value);
    // a chosen seed would tell its creator every hand: only a table of one person and agents takes one
    if ($("seed").value && !body.seats.slice(1).some((s) => s === "person" || s === "bot")) body.seed = Number($("seed").value);
    if ($("t-grace").value) body.grace_seconds = Number($("t-grace").value) * 60;
    const table = await api("POST", "/api/tables", body);
    await joinTable(table.id, $("t-name").value);
  });
}

async function joinTable(id, name) {
  // a rated player (made on the daily challenge's page) joins as itself; else, or if the server
  // no longer knows the player, by name
  const player = localStorage.getItem("manni-player");
  let joined = null;
  if (player) {
    try {
      joined = await api("POST", `/api/tables/${id}/seats`, { player });
    } catch (err) {
      if (!/unknown player|keeps no players/.test(err.message)) throw err;
      localStorage.removeItem("manni-player");
    }
  }
  joined = joined || await api("POST", `/api/tables/${id}/seats`, { name });
  localStorage.setItem(tokenKey(id), joined.token);
  openTable(id, joined.token);
}

async function resumeTable() {
  const match = /^#table=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!match) return;
  const id = match[1];
  const token = localStorage.getItem(tokenKey(id));
  if (token) {
    openTable(id, token);
    return;
  }
  const info = await api("GET", `/api/tables/${id}`);
  const people = info.seats.filter((s) => s.joined).map((s) => s.name);
  $("home").hidden = true;
  $("join-text").textContent = `A table of ${variantName(info.variant)}` + (people.length ? ` with ${people.join(" and ")}` : "") +
    (info.open_seats ? `: ${info.open_seats} open seat${info.open_seats > 1 ? "s" : ""}.` : ": no open seat; you can watch.");
  const about = document.querySelector("#home .lead").textContent.replace(/\s+/g, " ").trim();  // what Manni is
  $("join-about").replaceChildren(`${about} This table plays ${info.name}. ${info.summary} `, rulesLink(info));
  $("join-facts").textContent = `This table: ${tableFacts(info)}.`;
  $("join").hidden = !info.open_seats;
  $("join-panel").hidden = false;
  $("join-panel").dataset.table = id;
}

// The table's variant, how its game ends, its options and whether hints are on, in one line.
function tableFacts(info) {
  const facts = [info.name, info.end];
  if (info.options.negative) facts.push("deal scores may be negative");
  facts.push(info.hints ? "hints on" : "hints off");
  const minutes = info.grace_seconds / 60;
  facts.push(`a person who leaves keeps the seat ${Number(minutes.toFixed(1))} min`);
  return facts.join(" · ");
}

function rulesLink(info) {
  const link = el("a", "rules-link", `Rules of ${info.name}`);
  link.href = info.rules;
  link.target = "_blank";
  return link;
}

function openTable(id, token) {
  history.replaceState(null, "", `#table=${id}`);
  $("join-panel").hidden = true;
  $("home").hidden = true;
  $("invite").value = `${location.origin}/#table=${id}`;
  $("seats-panel").hidden = false;
  tableView = { id, token, seat: null, ws: null, tries: 0, over: false, move: tableMove, moves: null };
  roundsSeen = Infinity;  // set from the first state: a rejoin does not show old deals' summaries
  connectTable();
}

function connectTable() {
  const view = tableView;
  const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/tables/${view.id}`);
  view.ws = ws;
  ws.addEventListener("open", () => ws.send(JSON.stringify(view.token ? { type: "hello", token: view.token } : { type: "watch" })));
  ws.addEventListener("message", (event) => onTableMessage(JSON.parse(event.data)));
  ws.addEventListener("close", () => {
    if (view !== tableView || view.over || view.ws !== ws) return;
    if (view.tries++ < 20) {
      showError("connection lost: reconnecting…");
      setTimeout(connectTable, Math.min(5000, 500 * view.tries));
    }
  });
}

// A move is sent with the count of moves it was chosen after: the server refuses it if the game has
// gone on since. The page stays busy until a state with another count (the move made) or an error
// arrives, not on pushes that change only the seats (someone joining or leaving).
function tableMove(actions) {
  if (busy || !tableView.ws || tableView.ws.readyState !== WebSocket.OPEN) return;
  busy = true;
  document.body.classList.add("busy");
  tableView.ws.send(JSON.stringify({ type: "move", actions, after: tableView.moves }));
}

function notBusy() {
  busy = false;
  document.body.classList.remove("busy");
}

function onTableMessage(message) {
  if (message.type === "welcome") {
    notBusy();  // a new socket: a move sent on the old one was made or lost, and the next state says which
    tableView.seat = message.seat;
    tableView.tries = 0;
    showError("");
  } else if (message.type === "error") {
    notBusy();
    showError(message.message);
    if (message.fatal) {
      tableView.over = true;
      localStorage.removeItem(tokenKey(tableView.id));
    }
  } else if (message.type === "state") {
    if (message.moves !== tableView.moves) notBusy();
    tableView.moves = message.moves;
    showTableState(message);
  }
}

function showTableState(message) {
  const info = message.table;
  $("table-facts").replaceChildren(`${tableFacts(info)} · `, rulesLink(info));
  $("seat-list").replaceChildren(...info.seats.map((s) => {
    const status = s.bot ? (!s.joined ? "open for a remote bot: manni bot connect INVITE-LINK COMMAND" :
      s.stand_in ? "bot, away: an agent plays" : s.connected ? "bot" : "bot, away") :
      !s.person ? "agent" : !s.joined ? "open: send the invite link" : s.stand_in ? "away: an agent plays" :
      s.connected ? "here" : "away";
    const open = (s.person || s.bot) && !s.joined;
    const item = el("li", (s.person || s.bot) && s.joined ? (s.connected ? "here" : "away") : "", (open ? `seat ${s.seat}` : s.name) +
      (s.seat === message.seat ? " (you)" : "") + ` · ${status}`);
    item.dataset.seat = s.seat;
    return item;
  }));
  if (info.seed !== null) $("seat-list").append(el("li", "", `deals from seed ${info.seed}, chosen by the table's creator`));
  $("t-start").hidden = info.started || message.seat === null;
  if (!message.game) {
    $("table").hidden = true;
    $("hint-panel").hidden = true;
    return;
  }
  const g = message.game;
  g.replay_url = `/api/tables/${tableView.id}/replay`;
  if (roundsSeen === Infinity) roundsSeen = g.rounds.length;
  showGame(g);
  showHints(message.hints);
  showReview(message.review);
}

function showHints(hints) {
  $("hint-panel").hidden = !hints;
  if (!hints) return;
  const valued = hints.some((h) => h.points !== undefined);
  const worlds = valued ? hints.find((h) => h.worlds).worlds : 0;
  $("hint-note").textContent = valued ? `Each card's expected deal points for you, by the search over ${worlds} ` +
    "sampled deals that fit what you can see, and in brackets what it gives away against the best card; the bar and " +
    "the percentage: how likely the agent is to play it." : "How likely the agent is to make each move.";
  $("hints").replaceChildren(...hints.slice(0, 16).map((h, k) => {
    const row = el("div", "prob hint" + (k === 0 ? " chosen" : ""));
    const bar = el("div", "bar");
    bar.style.width = `${Math.round(h.p * 100)}%`;
    const worth = h.points === undefined ? "" : `${signed(h.points, 2)} (${cost(h.cost)})`;
    row.append(richText("span", "label", h.label), el("span", "track"), el("span", "worth", worth),
      el("span", "value", `${(h.p * 100).toFixed(1)}%`));
    row.children[1].append(bar);
    row.dataset.action = h.action;
    row.dataset.label = h.label;
    return row;
  }));
  const byAction = new Map(hints.map((h) => [h.action, h.p]));
  for (const button of document.querySelectorAll("#hand button.card")) {
    const h = game.hand.find((c) => c.card === button.dataset.card);
    if (h && byAction.has(h.action)) {
      const hint = hints.find((x) => x.action === h.action);
      button.title = (hint.points === undefined ? "" : `worth ${signed(hint.points, 2)} points · `) +
        `agent: ${(byAction.get(h.action) * 100).toFixed(1)}%`;
      button.classList.toggle("hint-top", h.action === hints[0].action);
    }
  }
}

function showReview(review) {
  const box = $("review");
  box.hidden = !review || !review.decisions.length || $("summary").hidden;
  if (box.hidden) return;
  const seat = tableView.seat;
  let title = `Your decisions in deal ${review.deal} beside the agent's: ${review.differs} differ; ` +
    `your cards' cost against the best ones: ${signed(-review.cost, 2)} expected points`;
  if (review.par) {
    title += `. Your points ${signed(review.par.points[seat])}, par ${signed(review.par.par[seat])}: ` +
      `${signed(review.par.difference[seat])} against par (game: ${signed(review.par_totals.difference[seat])})`;
  }
  $("review-title").textContent = title;
  const head = el("tr");
  for (const h of ["", "you", "agent", "worth", "best", "cost"]) head.append(el("th", "", h));
  const rows = review.decisions.map((d, k) => {
    const row = el("tr", d.differs ? "differs" : "");
    const valued = d.points !== undefined;
    const unvalued = d.forced ? "forced" : "–";
    row.append(el("th", "", `${k + 1}. ${d.phase}`), richText("td", "", d.action), richText("td", "", d.agent),
      el("td", valued ? "" : "unvalued", valued ? signed(d.points, 2) : unvalued), el("td", "", valued ? signed(d.best, 2) : ""),
      el("td", valued && d.cost > 0 ? "cost" : "", valued ? cost(d.cost) : ""));
    return row;
  });
  $("review-table").replaceChildren(head, ...rows);
  $("review-note").textContent = review.decisions.some((d) => d.points === undefined) ? "Worth and cost are " +
    "given for card plays with a choice: a forced move (the only legal one) has none, nor has a decision before " +
    "the card play (“–”)." : "";
}

async function copyInvite() {
  const link = $("invite").value;
  try {
    await navigator.clipboard.writeText(link);
  } catch (err) {  // no clipboard API (plain http on another host): select it for Ctrl+C
    $("invite").select();
    document.execCommand("copy");
  }
  $("copy-note").textContent = "Copied: send it to your friends.";
}

function wireTables() {
  $("variant").addEventListener("change", fillTableSeats);
  $("new-table").addEventListener("submit", createTable);
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    guarded(() => joinTable($("join-panel").dataset.table, $("join-name").value));
  });
  $("watch").addEventListener("click", () => openTable($("join-panel").dataset.table, null));
  $("t-start").addEventListener("click", () => tableView.ws.send(JSON.stringify({ type: "start" })));
  $("copy-invite").addEventListener("click", copyInvite);
  $("summary-ok").addEventListener("click", () => { $("review").hidden = true; });
}
