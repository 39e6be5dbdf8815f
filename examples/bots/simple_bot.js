#!/usr/bin/env node
// A manni-bot/1 bot for Node using no packages (see docs/bot-protocol.md).
// Strategy: keep the hand and pass the Manni, discard and announce the first legal
// choice; in play, lead low and follow with the lowest card that wins, else the lowest.
"use strict";
const readline = require("readline");

const RANKS = "23456789TJQKA";
const rank = (card) => RANKS.indexOf(card[0]);

function choose(request) {
  const { legal, legal_names: names, phase, trick } = request;
  if (["exchange", "swap", "pickup"].includes(phase)) {
    for (const wanted of ["exchange_done", "keep_hand", "pass_manni"]) {
      const i = names.indexOf(wanted);
      if (i >= 0) return legal[i];
    }
  }
  if (phase !== "play") return legal[0]; // discard the lowest card / announce the first contract left
  const order = legal.map((action, i) => [action, names[i]]).sort((a, b) => rank(a[1]) - rank(b[1]));
  if (trick.length === 0) return order[0][0];
  const top = Math.max(...trick.map(rank));
  const winner = order.find(([, card]) => rank(card) > top);
  return (winner || order[0])[0];
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  const message = JSON.parse(line);
  let answer = null;
  if (message.type === "hello") {
    answer = { type: "hello", protocol: "manni-bot/1", name: "simple-node" };
  } else if (message.type === "act") {
    answer = { action: choose(message) };
  } else if (message.type === "bye") {
    process.exit(0);
  } // game, deal_end, game_end: nothing to answer
  if (answer !== null) process.stdout.write(JSON.stringify(answer) + "\n");
});
input.on("close", () => process.exit(0));
