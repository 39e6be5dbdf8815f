// Manni in the browser: play against the server's agents, replay records. Plain JS, no build step.
"use strict";

const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ DOM and fetch
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// One card notation everywhere: the hand's (10♠, red suits red); moves that are not cards in words.
const CARD_TOKEN = /\b([2-9TJQKA])([CDHS])\b/g;
const ACTION_WORDS = { keep_hand: "keep the hand", swap_hand: "swap for the Manni", take_manni: "take the Manni",
  pass_manni: "pass", exchange_done: "end the exchange" };

function cardName(card) {
  return (card[0] === "T" ? "10" : card[0]) + SUIT_SYMBOLS[card[1]];
}

function inWords(text) {
  return String(text).replace(/\b(keep_hand|swap_hand|take_manni|pass_manni|exchange_done)\b/g, (m) => ACTION_WORDS[m])
    .replace(/\bannounce_([a-z]+)\b/g, "announce $1");
}

// An element showing `text` with every card in the hand's notation (a span per card, coloured by suit).
function richText(tag, className, text) {
  const node = el(tag, className);
  const words = inWords(text ?? "").replace(/(^|[\s(:,])-(?=\d)/g, "$1−");  // the minus sign, as number() writes it
  let last = 0;
  for (const match of words.matchAll(CARD_TOKEN)) {
    node.append(words.slice(last, match.index), el("span", "DH".includes(match[2]) ? "suit-red" : "suit-black", cardName(match[0])));
    last = match.index + match[0].length;
  }
  node.append(words.slice(last));
  return node;
}

// Numbers as the page shows them: negatives with the minus sign (−4, not -4); signed() adds + to
// positives (a deal's points, a difference); cost() is what a move gives away, as a signed loss
// ("best" for the best move; 0.00 for less than half a hundredth).
function number(x, digits = 0) {
  const text = Math.abs(x).toFixed(digits);
  return x < 0 && Number(text) !== 0 ? `−${text}` : text;
}

function signed(x, digits = 0) {
  const text = number(x, digits);
  return x > 0 && Number(text) !== 0 ? `+${text}` : text;
}

function cost(x) {
  return x > 0 ? signed(-x, 2) : "best";
}

function cardEl(card, tag = "div") {
  const node = el(tag, "card" + ("DH".includes(card[1]) ? " red" : ""));
  node.dataset.card = card;
  node.append(el("span", "rank", card[0] === "T" ? "10" : card[0]), el("span", "suit", SUIT_SYMBOLS[card[1]]));
  return node;
}

async function api(method, path, body, raw = false) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.body = raw ? body : JSON.stringify(body);
    if (!raw) options.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, options);
  let data;
  try {
    data = await response.json();
  } catch (err) {
    data = { error: `${response.status} ${response.statusText}` };
  }
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.replaceChildren(richText("span", "", message));
  box.hidden = !message;
}

async function guarded(work) {
  try {
    showError("");
    await work();
  } catch (err) {
    showError(err.message);
  }
}

function showTab(name) {
  for (const tab of ["play", "replay"]) {
    $(tab).hidden = tab !== name;
    $(`tab-${tab}`).classList.toggle("active", tab === name);
  }
  if (name === "replay") guarded(loadLibrary);
}

// ------------------------------------------------------------------ play
let options = null;
let game = null;
let selected = new Set();
let roundsSeen = 0;
let busy = false;

let variants = [];  // /api/variants: each variant's id, name, description, facts and options (with defaults)

function showVariantCards() {
  const chosen = $("variant").value;
  $("variant-cards").replaceChildren(...variants.map((v) => {
    const card = el("div", "variant-card" + (v.id === chosen ? " chosen" : ""));
    card.setAttribute("role", "radio");
    card.setAttribute("aria-checked", String(v.id === chosen));
    card.tabIndex = 0;
    card.dataset.variant = v.id;
    const rules = el("a", "rules-link", "Rules");
    rules.href = v.rules;
    rules.addEventListener("click", (event) => event.stopPropagation());
    card.append(el("h3", "", v.name), el("p", "", v.description),
      el("p", "facts", `${v.pack} cards · ${v.hand} each · Manni ${v.manni} · contract: ${v.contract} · ${v.end}`), rules);
    const choose = () => {
      $("variant").value = v.id;
      $("variant").dispatchEvent(new Event("change"));
    };
    card.addEventListener("click", choose);
    card.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(); } });
    return card;
  }));
}

function variantName(id) {
  const row = variants.find((v) => v.id === id);
  return row ? row.name : id;
}

function fillOpponents() {
  const menu = options.agents[$("variant").value];
  for (const id of ["opp1", "opp2"]) {
    const select = $(id);
    select.replaceChildren(...menu.choices.map((spec) => el("option", "", spec)));
    select.value = menu.default;
  }
  const variant = variants.find((v) => v.id === $("variant").value);
  $("target-label").hidden = !("target" in variant.options);
  showVariantCards();
}

async function startGame(event) {
  event.preventDefault();
  await guarded(async () => {
    const body = {
      variant: $("variant").value,
      opponents: [$("opp1").value, $("opp2").value],
      seat: Number($("seat").value),
    };
    if ($("target").value && !$("target-label").hidden) body.target = Number($("target").value);
    if ($("seed").value) body.seed = Number($("seed").value);
    const data = await api("POST", "/api/games", body);
    history.replaceState(null, "", `#game=${data.id}`);  // this tab's game: a reload resumes it
    roundsSeen = 0;
    showGame(data);
  });
}

async function send(actions) {
  if (tableView) return tableView.move(actions);  // a table: over its socket (tables.js)
  if (busy) return;
  busy = true;
  document.body.classList.add("busy");
  await guarded(async () => showGame(await api("POST", `/api/games/${game.id}/actions`, { actions })));
  busy = false;
  document.body.classList.remove("busy");
}

function seatBox(g, seat) {
  const box = el("div", "seat-inner" + (g.to_move === seat ? " on-turn" : ""));
  box.append(el("div", "name", g.players[seat] + (seat === g.dealer ? " · dealer" : "")));
  const backs = el("div", "backs");
  for (let i = 0; i < g.card_counts[seat]; i++) backs.append(el("div", "card back"));
  box.append(backs);
  const facts = [`tricks ${g.tricks_won[seat]}`];
  if (g.exchange_counts[seat] >= 0) facts.push(`exchanged ${g.exchange_counts[seat]}`);
  box.append(el("div", "facts", facts.join(" · ")));
  return box;
}

function trickEl(plays, g, winner) {
  const area = el("div", "trick-cards");
  for (const play of plays) {
    const spot = el("div", "play");
    spot.append(cardEl(play.card), el("div", "who", g.players[play.seat]));
    if (winner === play.seat) spot.classList.add("winner");
    area.append(spot);
  }
  return area;
}

function scoreTable(table, names, g) {
  const plusMinus = g.scoring === "plus_minus";
  const head = el("tr");
  for (const h of ["", "tricks", "total"].concat(plusMinus ? ["plus", "minus"] : [])) head.append(el("th", "", h));
  const rows = [head];
  names.forEach((name, s) => {
    const row = el("tr");
    row.append(el("th", "", name), el("td", "", g.tricks_won[s]), el("td", "", number(g.totals[s])));
    if (plusMinus) row.append(el("td", "", g.plus[s]), el("td", "", g.minus[s]));
    rows.push(row);
  });
  table.replaceChildren(...rows);
}

function showGame(g) {
  game = g;
  selected = new Set();
  $("home").hidden = true;
  $("table").hidden = false;
  $("box-left").replaceChildren(seatBox(g, (g.seat + 1) % 3));
  $("box-right").replaceChildren(seatBox(g, (g.seat + 2) % 3));
  const info = [`Deal ${g.deal}`, variantName(g.variant)];
  if (g.contract) info.push(g.contract);
  if (g.drawn.length) info.push(`you drew ${g.drawn.join(" ")}`);
  $("info").replaceChildren(richText("span", "", info.join(" · ")));
  const current = el("div", "current");
  current.append(trickEl(g.trick, g, null));
  const last = el("div", "last");
  if (g.last_trick) {
    last.append(el("div", "note", `last trick → ${g.players[g.last_trick.winner]}`),
      trickEl(g.last_trick.cards, g, g.last_trick.winner));
  }
  $("trick").replaceChildren(last, current);
  $("prompt").replaceChildren(richText("span", "", g.prompt));
  renderHand();
  scoreTable($("score"), g.players, g);
  $("log").replaceChildren(...g.log.map((line) => richText("li", "", line)));
  $("log").scrollTop = $("log").scrollHeight;
  if (g.rounds.length > roundsSeen) showSummary();
}

function renderHand() {
  const g = game;
  const hand = g.hand.map((h) => {
    const button = cardEl(h.card, "button");
    button.type = "button";
    button.disabled = !h.legal;
    if (selected.has(h.action)) button.classList.add("selected");
    button.addEventListener("click", () => clickCard(h.action));
    return button;
  });
  $("hand").replaceChildren(...hand);
  const buttons = g.buttons.map((b) => {
    const button = el("button", "action", b.label);
    button.type = "button";
    button.dataset.action = b.action;
    button.addEventListener("click", () => send([b.action]));
    return button;
  });
  if (g.finished) {
    const again = el("button", "action primary", "Replay this game");
    again.type = "button";
    again.addEventListener("click", replayGame);
    buttons.push(again);
  }
  if (g.select) {
    const n = selected.size;
    const label = g.select.exact ? `Discard ${n} of ${g.select.max}` : n ? `Exchange ${n} card${n === 1 ? "" : "s"}` : "Keep my hand";
    const confirm = el("button", "action primary", label);
    confirm.type = "button";
    confirm.id = "confirm";
    confirm.disabled = g.select.exact && n !== g.select.max;
    confirm.addEventListener("click", () => {
      const actions = [...selected];
      if (g.select.done !== null && actions.length < g.select.max) actions.push(g.select.done);
      send(actions);
    });
    buttons.push(confirm);
  }
  $("buttons").replaceChildren(...buttons);
}

function clickCard(action) {
  if (!game.select) {
    send([action]);
    return;
  }
  if (selected.has(action)) selected.delete(action);
  else if (selected.size < game.select.max) selected.add(action);
  renderHand();
}

function showSummary() {
  const g = game;
  const r = g.rounds[g.rounds.length - 1];
  $("summary-title").textContent = g.finished ? g.prompt : `Deal ${r.deal} is over`;
  $("summary-contract").replaceChildren(richText("span", "", r.contract + (r.cut_card ? ` (cut card ${r.cut_card})` : "")));
  const plusMinus = g.scoring === "plus_minus";
  const par = g.par && g.par.deals[r.deal - 1];
  const head = el("tr");
  for (const h of ["", "tricks", "points"].concat(par ? ["par", "− par", "game − par"] : [], ["total"], plusMinus ? ["plus", "minus"] : [])) {
    head.append(el("th", "", h));
  }
  const rows = [head];
  g.players.forEach((name, s) => {
    const row = el("tr");
    row.append(el("th", "", name), el("td", "", r.tricks_won[s]), el("td", "", signed(r.points[s])));
    if (par) row.append(el("td", "", signed(par.par[s])), el("td", "par-diff", signed(par.difference[s])),
      el("td", "par-diff", signed(g.par.totals.difference[s])));
    row.append(el("td", "", number(r.totals[s])));
    if (plusMinus) row.append(el("td", "", r.plus[s]), el("td", "", r.minus[s]));
    rows.push(row);
  });
  $("summary-table").replaceChildren(...rows);
  $("summary-par").textContent = par ? "Par: the points the shipped agent makes in each seat when it plays all three " +
    "seats with these same cards. Points − par takes out the luck of the cards, not the other players' play." : "";
  $("summary-ok").textContent = g.finished ? "Close" : "Next deal";
  $("summary-replay").hidden = !g.finished;
  $("summary").hidden = false;
}

function replayGame() {
  guarded(async () => openReplay(await api("GET", game.replay_url || `/api/games/${game.id}/replay`)));
}

function closeSummary() {
  roundsSeen = game.rounds.length;
  $("summary").hidden = true;
}

async function resumeGame() {
  const match = /^#game=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!match) return;
  try {
    const g = await api("GET", `/api/games/${match[1]}`);
    roundsSeen = g.rounds.length;
    showGame(g);
  } catch (err) {
    history.replaceState(null, "", location.pathname);
    throw err;
  }
}

// ------------------------------------------------------------------ replay
let replay = null;
let frame = 0;
let uploaded = null;

function openReplay(data) {
  replay = data;
  frame = 0;
  $("replay-view").hidden = false;
  $("r-slider").max = replay.frames.length - 1;
  showTab("replay");
  renderFrame();
}

function renderFrame() {
  const f = replay.frames[frame];
  const deal = replay.deals[f.deal - 1];
  $("r-slider").value = frame;
  $("r-counter").textContent = `${frame + 1} / ${replay.frames.length}`;
  let text = f.text;
  if (f.deal_over && f.deal_over.par) {
    const par = f.deal_over.par;
    text += `. Par (the agent in all three seats): ${par.par.map((x) => signed(x)).join(", ")}; points − par: ` +
      par.difference.map((x) => signed(x)).join(", ");
  }
  $("r-text").replaceChildren(richText("span", "", text));
  const info = [`Deal ${f.deal} of ${replay.deals.length}`, variantName(replay.variant)];
  if (f.contract) info.push(f.contract);
  info.push(`Manni as dealt: ${deal.manni.join(" ")}`);
  if (replay.par) info.push(`game points − par: ${replay.par.totals.difference.map((x) => signed(x)).join(", ")}`);
  $("r-info").replaceChildren(richText("span", "", info.join(" · ")));
  const seats = replay.players.map((name, s) => {
    const box = el("div", "r-seat" + (f.seat === s ? " on-turn" : ""));
    box.append(el("div", "name", name + (s === deal.dealer ? " · dealer" : "")));
    const hand = el("div", "hand small");
    hand.append(...f.hands[s].map((c) => cardEl(c)));
    box.append(hand);
    if (f.discarded[s].length) box.append(richText("div", "facts", `discarded: ${f.discarded[s].join(" ")}`));
    box.append(el("div", "facts", `tricks ${f.tricks_won[s]} · total ${number(f.totals[s])}` +
      (replay.scoring === "plus_minus" ? ` · plus ${f.plus[s]} · minus ${f.minus[s]}` : "")));
    return box;
  });
  $("r-seats").replaceChildren(...seats);
  $("r-trick").replaceChildren(trickEl(f.trick, replay, f.trick_winner));
  renderProbabilities(f);
  $("r-prev").disabled = frame === 0;
  $("r-next").disabled = frame === replay.frames.length - 1;
}

function renderProbabilities(f) {
  const box = $("r-probs");
  if (!f.probabilities) {
    box.replaceChildren(el("p", "note", f.seat === null ? "" : "not recorded for this decision"));
    return;
  }
  const rows = Object.entries(f.probabilities).slice(0, 12).map(([action, p]) => {
    const row = el("div", "prob" + (action === f.action ? " chosen" : "") + (action === f.agent_choice ? " agent-choice" : ""));
    const bar = el("div", "bar");
    bar.style.width = `${Math.round(p * 100)}%`;
    row.append(richText("span", "label", action), el("span", "track"), el("span", "value", `${(p * 100).toFixed(1)}%`));
    row.children[1].append(bar);
    return row;
  });
  if (f.agent_choice) {  // a person's move beside the agent's (a table's review)
    const same = f.agent_choice === f.action;
    rows.unshift(richText("p", "review-note" + (same ? "" : " differs"), same ? "The agent would have played the same." :
      `The agent would have played ${f.agent_choice}.`));
  }
  box.replaceChildren(...rows);
}

function go(index) {
  if (!replay) return;
  frame = Math.max(0, Math.min(replay.frames.length - 1, index));
  renderFrame();
}

function isTrickEnd(i) {
  return replay.frames[i].trick_winner !== null || replay.frames[i].kind === "deal";
}

function nextTrick() {
  let i = frame + 1;
  while (i < replay.frames.length - 1 && !isTrickEnd(i)) i++;
  go(i);
}

function prevTrick() {
  let i = frame - 1;
  while (i > 0 && !isTrickEnd(i)) i--;
  go(i);
}

function dealStep(direction) {
  const starts = replay.deals.map((d) => d.first_frame);
  const current = replay.frames[frame].deal - 1;
  if (direction < 0) go(frame > starts[current] ? starts[current] : starts[Math.max(0, current - 1)]);
  else go(current + 1 < starts.length ? starts[current + 1] : replay.frames.length - 1);
}

function fillGames(select, games, more = false) {
  select.replaceChildren(...games.map((g) => {
    const winners = g.winners ? ` · winner ${g.winners.map((s) => (g.players ? g.players[s] : `seat ${s}`)).join(", ")}` : " · unfinished";
    return el("option", "", `${g.index + 1}: ${variantName(g.variant)} · ${g.deals} deal${g.deals === 1 ? "" : "s"}${winners}`);
  }));
  games.forEach((g, i) => { select.options[i].value = String(g.index); });
  if (more) {  // the server reads the first games of a long file only
    const note = el("option", "", `The file holds more games: the first ${games.length} are listed`);
    note.disabled = true;
    select.append(note);
  }
}

async function loadLibrary() {
  const games = (await api("GET", "/api/library")).games;
  $("library-empty").hidden = games.length > 0;
  $("library-list").replaceChildren(...games.map((g) => {
    const item = el("li");
    const open = el("button", "action", `${variantName(g.variant)} · ${g.deals} deal${g.deals === 1 ? "" : "s"}`);
    open.type = "button";
    open.dataset.index = g.index;
    open.addEventListener("click", () => guarded(async () => openReplay(await api("GET", `/api/library/${g.index}`))));
    const who = g.players ? g.players.join(", ") : "";
    const won = g.winners ? `won by ${g.winners.map((s) => (g.players ? g.players[s] : `seat ${s}`)).join(" and ")}` : "unfinished";
    item.append(open, el("span", "note", ` ${who} · ${won}`));
    return item;
  }));
}

async function loadUpload(index) {
  const data = await api("POST", `/api/replay?game=${index}`, uploaded, true);
  fillGames($("replay-game"), data.games, data.more_games);
  $("replay-game").value = String(index);
  $("replay-game-label").hidden = false;
  openReplay(data.replay);
}

// ------------------------------------------------------------------ wiring
function wire() {
  $("tab-play").addEventListener("click", () => showTab("play"));
  $("tab-replay").addEventListener("click", () => showTab("replay"));
  $("variant").addEventListener("change", fillOpponents);
  $("quick-play").addEventListener("click", () => $("new-game").requestSubmit());
  $("quick-table").addEventListener("click", () => $("new-table").requestSubmit());
  wireTables();
  $("new-game").addEventListener("submit", startGame);
  $("summary-ok").addEventListener("click", closeSummary);
  $("summary-replay").addEventListener("click", () => {
    closeSummary();
    replayGame();
  });
  $("replay-file").addEventListener("change", () => guarded(async () => {
    const file = $("replay-file").files[0];
    if (!file) return;
    if (file.size > options.max_upload_bytes) throw new Error(`the file is larger than ${options.max_upload_bytes} bytes`);
    uploaded = await file.arrayBuffer();
    await loadUpload(0);
  }));
  $("replay-game").addEventListener("change", () => guarded(() => loadUpload(Number($("replay-game").value))));
  $("server-records").addEventListener("change", () => guarded(async () => {
    if ($("server-records").value === "") return;
    openReplay(await api("GET", `/api/records/${$("server-records").value}`));
  }));
  $("r-prev").addEventListener("click", () => go(frame - 1));
  $("r-next").addEventListener("click", () => go(frame + 1));
  $("r-trick-prev").addEventListener("click", prevTrick);
  $("r-trick-next").addEventListener("click", nextTrick);
  $("r-deal-prev").addEventListener("click", () => dealStep(-1));
  $("r-deal-next").addEventListener("click", () => dealStep(1));
  $("r-slider").addEventListener("input", () => go(Number($("r-slider").value)));
  document.addEventListener("keydown", (event) => {
    if ($("replay").hidden || event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    if (event.key === "ArrowLeft") go(frame - 1);
    if (event.key === "ArrowRight") go(frame + 1);
  });
}

async function init() {
  wire();
  await guarded(async () => {
    options = await api("GET", "/api/options");
    variants = (await api("GET", "/api/variants")).variants.filter((v) => options.variants.includes(v.id));
    $("variant").replaceChildren(...variants.map((v) => {
      const option = el("option", "", v.name);
      option.value = v.id;
      return option;
    }));
    fillOpponents();
    if (options.records.length) {
      fillGames($("server-records"), options.records);
      $("server-records").prepend(el("option", "", "choose a game"));
      $("server-records").options[0].value = "";
      $("server-records").value = "";
      $("server-records-label").hidden = false;
    }
    fillTableSeats();
    await resumeGame();
    await resumeTable();
  });
  document.body.dataset.ready = "1";
}

init();
