// arena view: the page of one run. Plain script, no build step, no network: the index is inlined in the page and
// each game's chunk (gzip + base64 JSON) is a script beside it, added when the game is opened.
"use strict";
(function () {
  const index = JSON.parse(document.getElementById("arena-index").textContent);
  const chunks = new Map(); // id -> Promise of the decoded chunk
  const waiting = new Map(); // id -> resolve of a chunk script still loading
  const state = { game: null, chunk: null, ply: 0, filtered: index.games, tab: "overview" };
  const view = { index, state, ready: false, firstGameShownAt: null };
  window.arenaView = view;

  // ---------------------------------------------------------------- small helpers
  function esc(value) {
    return String(value === null || value === undefined ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  const fmt = (x, digits) => (typeof x === "number" ? x.toFixed(digits === undefined ? 2 : digits) : esc(x));
  const pct = (x) => (100 * x).toFixed(0);
  const $ = (id) => document.getElementById(id);

  function moveName(move, cols) {
    if (move === -1) return "pass";
    return String.fromCharCode(97 + (move % cols)) + String(Math.floor(move / cols) + 1);
  }

  // ---------------------------------------------------------------- chunks
  window.arenaChunk = function (id, base64) {
    const resolve = waiting.get(String(id));
    if (!resolve) return;
    waiting.delete(String(id));
    resolve(decode(base64));
  };

  async function decode(base64) {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function chunkFile(id) {
    return typeof id === "number" ? "g" + String(id).padStart(5, "0") + ".js" : id + ".js";
  }

  function loadChunk(id) {
    const key = String(id);
    if (chunks.has(key)) return chunks.get(key);
    const promise = new Promise((resolve, reject) => {
      waiting.set(key, resolve);
      const script = document.createElement("script");
      script.src = index.chunk_dir + "/" + chunkFile(id) + (index.live ? "?t=" + Date.now() : "");
      script.onerror = () => { waiting.delete(key); chunks.delete(key); reject(new Error("cannot load " + script.src)); };
      script.onload = () => script.remove();
      document.head.appendChild(script);
    });
    chunks.set(key, promise);
    if (chunks.size > 40) chunks.delete(chunks.keys().next().value); // keep memory bounded on long sessions
    return promise;
  }

  // ---------------------------------------------------------------- plots (inline SVG)
  function plot(spec) {
    const W = spec.width || 420, H = spec.height || 220, L = 42, R = 10, T = 10, B = 30;
    const xs = (x) => L + (W - L - R) * (spec.xmax === spec.xmin ? 0.5 : (x - spec.xmin) / (spec.xmax - spec.xmin));
    const ys = (y) => H - B - (H - T - B) * (spec.ymax === spec.ymin ? 0.5 : (y - spec.ymin) / (spec.ymax - spec.ymin));
    const parts = [`<svg width="${W}" height="${H}" role="img" aria-label="${esc(spec.title)}">`];
    parts.push(`<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#888"/>`);
    parts.push(`<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#888"/>`);
    for (const [value, anchor] of [[spec.ymin, H - B], [spec.ymax, T + 8]]) {
      parts.push(`<text x="${L - 4}" y="${anchor}" text-anchor="end">${fmt(value, spec.ydigits || 0)}</text>`);
    }
    parts.push(`<text x="${L}" y="${H - B + 14}">${fmt(spec.xmin, 0)}</text>`);
    parts.push(`<text x="${W - R}" y="${H - B + 14}" text-anchor="end">${fmt(spec.xmax, 0)}</text>`);
    parts.push(`<text x="${(L + W) / 2}" y="${H - 4}" text-anchor="middle">${esc(spec.xlabel)}</text>`);
    for (const line of spec.vlines || []) {
      parts.push(`<line x1="${xs(line.x)}" x2="${xs(line.x)}" y1="${T}" y2="${H - B}" stroke="${line.color}" stroke-dasharray="4 3"/>`);
      parts.push(`<text x="${xs(line.x) + 3}" y="${T + 22}" fill="${line.color}">${esc(line.label)}</text>`);
    }
    for (const line of spec.hlines || []) {
      parts.push(`<line x1="${L}" x2="${W - R}" y1="${ys(line.y)}" y2="${ys(line.y)}" stroke="${line.color}" stroke-dasharray="4 3"/>`);
      parts.push(`<text x="${W - R}" y="${ys(line.y) - 3}" text-anchor="end" fill="${line.color}">${esc(line.label)}</text>`);
    }
    for (const series of spec.series) {
      if (series.type === "line" && series.data.length) {
        const d = series.data.map((p, i) => (i ? "L" : "M") + xs(p[0]).toFixed(1) + " " + ys(p[1]).toFixed(1)).join("");
        parts.push(`<path d="${d}" fill="none" stroke="${series.color}" stroke-width="1.5"><title>${esc(series.label)}</title></path>`);
      } else if (series.type === "points") {
        for (const p of series.data) {
          parts.push(`<circle cx="${xs(p[0]).toFixed(1)}" cy="${ys(p[1]).toFixed(1)}" r="2" fill="${p[2] || series.color}"/>`);
        }
      } else if (series.type === "intervals") {
        for (const p of series.data) {
          const x = xs(p[0]).toFixed(1);
          parts.push(`<line x1="${x}" x2="${x}" y1="${ys(p[1])}" y2="${ys(p[2])}" stroke="${series.color}" stroke-width="3">` +
            `<title>${esc(p[3] || "")}</title></line>`);
        }
      }
    }
    let legendX = L + 6;
    for (const series of spec.series.filter((s) => s.label)) {
      parts.push(`<text x="${legendX}" y="${T + 10}" fill="${series.color}">${esc(series.label)}</text>`);
      legendX += 7 * series.label.length + 12;
    }
    parts.push("</svg>");
    return `<div class="plot"><div class="plot-title">${esc(spec.title)}</div>${parts.join("")}</div>`;
  }

  const REWARD_COLOURS = { "1": "#1a7f37", "0": "#888888", "-1": "#b42318" };

  function gamePlots(games) {
    const out = [];
    const adapt = games.filter((g) => g.phase === "adapt");
    const series = adapt.length ? adapt : games;
    if (!series.length) return out;
    const counts = { 1: 0, 0: 0, "-1": 0 };
    const cumulative = { 1: [[0, 0]], 0: [[0, 0]], "-1": [[0, 0]] };
    series.forEach((g, i) => {
      counts[g.agent_reward] += 1;
      for (const r of [1, 0, -1]) cumulative[r].push([i + 1, counts[r]]);
    });
    const label = adapt.length ? "adaptation game" : "game";
    out.push(plot({ title: "Cumulative wins, draws and losses over the budget", xmin: 0, xmax: series.length, ymin: 0,
      ymax: Math.max(1, counts[1], counts[0], counts[-1]), xlabel: label, series: [
        { type: "line", data: cumulative[1], color: REWARD_COLOURS[1], label: "win" },
        { type: "line", data: cumulative[0], color: REWARD_COLOURS[0], label: "draw" },
        { type: "line", data: cumulative[-1], color: REWARD_COLOURS[-1], label: "loss" }] }));
    const trueK = index.overview.beliefs ? index.overview.beliefs.true_k : null;
    const hlines = [{ y: 0.5, color: "#999", label: "0.5" }];
    if (trueK !== null && trueK >= 0 && trueK <= 1) hlines.push({ y: trueK, color: "#7a3db8", label: "true K " + fmt(trueK) });
    out.push(plot({ title: "Final share (rho) of every game, coloured by reward", xmin: 0, xmax: series.length, ymin: 0, ymax: 1,
      ydigits: 1, xlabel: label, hlines, series: [{ type: "points", color: "#333",
        data: series.map((g, i) => [i + 1, g.agent_rho, REWARD_COLOURS[g.agent_reward]]) }] }));
    return out;
  }

  function overviewPlots(o) {
    const out = [];
    const beliefs = o.beliefs;
    if (beliefs && beliefs.points.length) {
      const xsOf = beliefs.points.map((p) => p.x);
      const lows = beliefs.points.map((p) => p.low).concat(beliefs.true_k === null ? [] : [beliefs.true_k]);
      const highs = beliefs.points.map((p) => p.high).concat(beliefs.true_k === null ? [] : [beliefs.true_k]);
      out.push(plot({ title: beliefs.title + (beliefs.true_k === null ? "" : " against the true K"), xmin: Math.min(...xsOf) - 1,
        xmax: Math.max(...xsOf) + 1, ymin: Math.min(0, ...lows), ymax: Math.max(1, ...highs), ydigits: 1, xlabel: "games",
        hlines: beliefs.true_k === null ? [] : [{ y: beliefs.true_k, color: "#7a3db8", label: "true K " + fmt(beliefs.true_k) }],
        series: [{ type: "intervals", color: "#23395d", data: beliefs.points.map((p) => [p.x, p.low, p.high, p.label]) }] }));
    }
    if (o.calls_plot && o.calls_plot.length) {
      const bins = o.calls_plot;
      out.push(plot({ title: "Model calls: latency (s) over the run", xmin: 0, xmax: bins[bins.length - 1].calls, ymin: 0,
        ymax: Math.max(0.001, ...bins.map((b) => b.max_latency)), ydigits: 2, xlabel: "model calls so far", series: [
          { type: "line", data: bins.map((b) => [b.calls, b.mean_latency]), color: "#23395d", label: "mean" },
          { type: "line", data: bins.map((b) => [b.calls, b.max_latency]), color: "#d08c2a", label: "max" }] }));
    }
    const palette = ["#23395d", "#b42318", "#1a7f37", "#7a3db8", "#d08c2a", "#0e7490", "#666"];
    if (o.checkpoints && o.checkpoints.length) {
      const all = o.checkpoints.flatMap((c) => c.points.map((p) => p[0]));
      out.push(plot({ title: "Win rate at each checkpoint", xmin: 0, xmax: Math.max(...all), ymin: 0, ymax: 1, ydigits: 1,
        xlabel: "adaptation games", series: o.checkpoints.slice(0, 7).map((c, i) => (
          { type: "line", data: c.points.map((p) => [p[0], p[1]]), color: palette[i], label: c.label })) }));
    }
    return out;
  }

  // ---------------------------------------------------------------- overview
  function outcomeTable(outcomes) {
    if (!outcomes || !outcomes.rows.length) return "<p class='muted'>No evaluation results yet.</p>";
    const cell = (o) => `<td class="num">${pct(o[1])}% [${pct(o[2])}-${pct(o[3])}] (${o[0]})</td>`;
    const rows = outcomes.rows.map((r) => `<tr><td>${esc(r.label)}${r.privileged ? " <em>(privileged)</em>" : ""}</td>` +
      `<td class="num">${r.games}</td>${cell(r.win)}${cell(r.draw)}${cell(r.lose)}</tr>`).join("");
    return `<h2>${esc(outcomes.title)}</h2><table id="outcomes"><tr><th></th><th class="num">games</th>` +
      `<th class="num">win % [Wilson 95%] (n)</th><th class="num">draw</th><th class="num">lose</th></tr>${rows}</table>`;
  }

  function renderOverview() {
    const o = index.overview;
    const usage = o.usage || {};
    const failures = Object.entries(o.failures || {});
    const parts = [outcomeTable(o.outcomes)];
    parts.push("<h2>Failures by kind</h2>" + (failures.length ? "<table id='failures'>" + failures.map(([k, v]) =>
      `<tr><td>${esc(k)}</td><td class="num">${v}</td></tr>`).join("") + "</table>" : "<p class='muted'>none</p>"));
    parts.push(`<h2>Model calls, tokens and cost</h2><table id="usage"><tr><td>calls</td><td class="num">${usage.calls || 0}</td></tr>` +
      `<tr><td>from the cache</td><td class="num">${usage.cache_hits || 0}</td></tr>` +
      `<tr><td>tokens in / out</td><td class="num">${usage.tokens_in || 0} / ${usage.tokens_out || 0}</td></tr>` +
      `<tr><td>cost</td><td class="num">$${fmt(usage.cost_usd || 0, 4)}</td></tr>` +
      `<tr><td>games</td><td class="num">${index.games.length}</td></tr></table>`);
    parts.push("<h2>Plots</h2><div class='plots'>" + gamePlots(index.games).concat(overviewPlots(o)).join("") + "</div>");
    if (o.notes && o.notes.length) parts.push("<h2>Notes</h2><ul>" + o.notes.map((n) => `<li>${esc(n)}</li>`).join("") + "</ul>");
    parts.push("<h2>Manifest</h2><table class='kv' id='manifest'>" + o.manifest.map(([k, v]) =>
      `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("") + "</table>");
    $("overview").innerHTML = parts.join("");
  }

  // ---------------------------------------------------------------- game list
  function rowText(g) {
    return `${g.phase} ${g.index} ${g.opponent} ${g.black} ${g.white} ${g.agent_reward === 1 ? "win" : g.agent_reward === 0 ? "draw" : "loss"}`;
  }

  function renderGameList() {
    const words = $("game-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    state.filtered = index.games.filter((g) => words.every((w) => rowText(g).toLowerCase().includes(w)));
    $("game-count").textContent = `${state.filtered.length} of ${index.games.length} games`;
    $("game-list").innerHTML = state.filtered.map((g) =>
      `<div class="game-row${state.game === g.id ? " selected" : ""}" data-game="${g.id}" title="${esc(g.black)} (black) vs ${esc(g.white)} (white)">` +
      `<span class="r${g.agent_reward}">${g.agent_reward === 1 ? "W" : g.agent_reward === 0 ? "D" : "L"}</span> ` +
      `${esc(g.phase)} #${g.index} &middot; ${esc(g.opponent)} &middot; rho ${fmt(g.agent_rho)} &middot; ${g.plies} plies` +
      `${g.forfeit_by ? " &middot; forfeit " + esc(g.forfeit_by) : ""}</div>`).join("");
  }

  // ---------------------------------------------------------------- game view
  async function openGame(id) {
    state.game = id;
    document.querySelectorAll(".game-row.selected").forEach((row) => row.classList.remove("selected"));
    const row = document.querySelector(`.game-row[data-game="${id}"]`);
    if (row) row.classList.add("selected");
    const chunk = await loadChunk(id);
    if (state.game !== id) return;
    state.chunk = chunk;
    renderGameFrame(index.games.find((g) => g.id === id) || index.games[id]);
    setPly(0);
    if (view.firstGameShownAt === null) {
      view.firstGameShownAt = performance.now();
      document.body.dataset.firstGameShown = String(view.firstGameShownAt);
    }
  }

  function renderGameFrame(summary) {
    const c = state.chunk;
    const cells = [];
    for (let i = 0; i < c.rows * c.cols; i++) cells.push(`<div class="cell" data-index="${i}"></div>`);
    $("game-view").innerHTML =
      `<h2>${esc(summary.phase)} game ${summary.index}: ${esc(summary.black)} (black) vs ${esc(summary.white)} (white)` +
      ` on ${esc(summary.layout)}, env ${summary.env_id}</h2>` +
      `<p>Result ${summary.black_discs}-${summary.white_discs}, rewards ${summary.rewards.join("/")}` +
      `${summary.forfeit_by ? ", forfeited by " + esc(summary.forfeit_by) : ""}; ${c.calls.length} model calls.</p>` +
      `<div class="controls"><button type="button" id="ply-prev">&larr;</button>` +
      `<input type="range" id="ply-slider" min="0" max="${c.boards.length - 1}" value="0">` +
      `<button type="button" id="ply-next">&rarr;</button><span id="ply-label"></span></div>` +
      `<div class="board-row"><div id="board" class="board" style="grid-template-columns: repeat(${c.cols}, 30px)">` +
      `${cells.join("")}</div><div id="ply-info"></div></div>` +
      (c.strategy ? `<h2>Strategy in force (batch from game ${esc(c.strategy.batch_start)})</h2><pre id="strategy">` +
        `${esc(JSON.stringify(c.strategy.strategy, null, 2))}</pre>` : "") +
      `<div id="ply-calls"></div>`;
    $("ply-slider").addEventListener("input", (e) => setPly(Number(e.target.value)));
    $("ply-prev").addEventListener("click", () => setPly(state.ply - 1));
    $("ply-next").addEventListener("click", () => setPly(state.ply + 1));
  }

  function setPly(ply) {
    const c = state.chunk;
    if (!c) return;
    ply = Math.max(0, Math.min(c.boards.length - 1, ply));
    state.ply = ply;
    const board = c.boards[ply];
    const legal = new Set(board.legal);
    const last = ply > 0 ? c.moves[ply - 1] : null;
    const el = $("board");
    el.dataset.ply = String(ply);
    el.querySelectorAll(".cell").forEach((cell, i) => {
      cell.dataset.state = board.cells[i];
      cell.classList.toggle("legal", ply < c.moves.length && legal.has(i));
      cell.classList.toggle("last", last === i);
      cell.title = moveName(i, c.cols);
    });
    $("ply-slider").value = String(ply);
    const over = ply >= c.moves.length;
    $("ply-label").textContent = over ? `end after ${c.moves.length} plies` :
      `ply ${ply}: ${board.to_move} to move, plays ${moveName(c.moves[ply], c.cols)}`;
    $("ply-info").innerHTML = `<table class="kv"><tr><td>discs</td><td>black ${board.black}, white ${board.white}</td></tr>` +
      `<tr><td>to move</td><td>${over ? "(game over)" : board.to_move}</td></tr>` +
      `<tr><td>legal moves</td><td>${over ? "" : board.legal.map((m) => moveName(m, c.cols)).join(", ") || "pass"}</td></tr>` +
      `<tr><td>last move</td><td>${last === null ? "" : moveName(last, c.cols)}</td></tr></table>`;
    renderCalls(c.calls.filter((call) => call.ply === ply).sort((a, b) => (a.attempt || 0) - (b.attempt || 0)), ply);
  }

  function verdictText(call, ply, lastAttempt) {
    const verdict = call.verdict || "no verdict";
    let text = verdict;
    if (call.reason) text += " (" + call.reason + ")";
    if ((call.attempt || 0) > 0) text = "re-asked (attempt " + call.attempt + "): " + text;
    const game = state.chunk.record;
    if (verdict !== "legal" && lastAttempt && game.forfeit_by && ply === state.chunk.moves.length) text += "; forfeit";
    return text;
  }

  function callHtml(call, ply, lastAttempt) {
    const messages = call.messages || [];
    const prompt = messages.length ? messages[messages.length - 1].content : "";
    const earlier = messages.slice(0, -1).map((m) => `<h4>${esc(m.role)}</h4><pre>${esc(m.content)}</pre>`).join("");
    return `<div class="call" data-call-index="${call.call_index}"><h3>call ${call.call_index}` +
      `${call.side ? " (side " + esc(call.side) + ": " + esc(call.agent) + ")" : ""}: <span class="verdict-${esc(call.verdict)}">` +
      `${esc(verdictText(call, ply, lastAttempt))}</span></h3>` +
      `<table class="kv"><tr><td>parsed move</td><td class="parsed">${esc(call.parsed_move || "none")}</td></tr>` +
      `<tr><td>tokens</td><td>${call.tokens_in || 0} in, ${call.tokens_out || 0} out${call.cache_hit ? " (from the cache)" : ""}</td></tr>` +
      `<tr><td>latency</td><td>${fmt(call.latency_s || 0, 3)} s${call.retries ? ", " + call.retries + " retries" : ""}</td></tr>` +
      (call.failure_kind ? `<tr><td>failure</td><td>${esc(call.failure_kind)}</td></tr>` : "") +
      (call.errors && call.errors.length ? `<tr><td>errors</td><td>${esc(call.errors.join("; "))}</td></tr>` : "") +
      (call.tool_calls ? `<tr><td>tool calls</td><td class="tool-calls">${esc(call.tool_calls.map((c) => c.name + "(" + c.arguments + ")").join("; "))}</td></tr>` : "") +
      (call.reasoning_tokens ? `<tr><td>reasoning tokens</td><td>${call.reasoning_tokens}</td></tr>` : "") +
      `<tr><td>template</td><td>${esc(call.template_hash || "")}</td></tr></table>` +
      `<div>Prompt (the last message the model saw):</div><pre class="prompt">${esc(prompt)}</pre>` +
      (earlier ? `<details><summary>earlier messages (${messages.length - 1})</summary>${earlier}</details>` : "") +
      `<div>Raw reply:</div><pre class="reply">${esc(call.reply === null || call.reply === undefined ? "(no reply)" : call.reply)}</pre>` +
      (call.reasoning ? `<details><summary>reasoning (the model's own; never fed back)</summary><pre class="reasoning">${esc(call.reasoning)}</pre></details>` : "") +
      `</div>`;
  }

  function renderCalls(calls, ply) {
    $("ply-calls").innerHTML = calls.length ? `<h2>Model calls at ply ${ply}</h2>` +
      calls.map((call, i) => callHtml(call, ply, i === calls.length - 1)).join("") :
      `<p class="muted">No model call at ply ${ply} (a classical agent's move, a forced pass, or the end).</p>`;
  }

  // The cwm program's utility table (engine path): black's return against black's final share on a full board; the true K
  // is drawn only once the run has ended (it comes from the run's metrics).
  function utilityPlot(counts) {
    const trueK = index.overview.beliefs ? index.overview.beliefs.true_k : null;
    const vlines = [{ x: 0.5, color: "#999", label: "0.5" }];
    if (trueK !== null && trueK >= 0 && trueK <= 1) vlines.push({ x: trueK, color: "#7a3db8", label: "true K " + fmt(trueK) });
    return "<h2>Code world model: the program's utility</h2>" + plot({ title: "The program's return (black) against black's final " +
      "share, full board: " + counts.utility_table, xmin: 0, xmax: 1, ymin: -1, ymax: 1, xlabel: "black's final share", vlines,
      series: [{ type: "line", data: counts.utility_curve, color: "#1f5fa8", label: "return" }] });
  }

  // ---------------------------------------------------------------- calls outside games
  async function renderExtra() {
    const extra = await loadChunk("x");
    const parts = [];
    const report = extra.agent_report;
    if (report && report.steps && report.steps.length) {
      const keys = Object.keys(report.steps[0]).filter((k) => typeof report.steps[0][k] !== "object");
      parts.push("<h2>Code world model: program versions</h2><table id='programs'><tr>" + keys.map((k) => `<th>${esc(k)}</th>`).join("") +
        "<th>failing tests</th></tr>" + report.steps.map((s) => "<tr>" + keys.map((k) => `<td>${esc(typeof s[k] === "number" ?
          fmt(s[k], 3) : s[k])}</td>`).join("") + `<td>${esc(JSON.stringify(s.failing_tests || s.failures || ""))}</td></tr>`).join("") + "</table>");
    }
    if (report && report.counts && report.counts.utility_curve) parts.push(utilityPlot(report.counts));
    if (report && report.counts) parts.push(`<h2>Agent report</h2><pre>${esc(JSON.stringify(report.counts, null, 2))}</pre>`);
    if (extra.strategies.length) {
      parts.push("<h2>Strategies by batch</h2>" + extra.strategies.map((s) => `<details${s.new ? " open" : ""}><summary>batch from game ` +
        `${esc(s.batch_start)}${s.error ? ": " + esc(s.error) : ""}</summary><pre>${esc(JSON.stringify(s.strategy, null, 2))}</pre></details>`).join(""));
    }
    parts.push(`<h2>Model calls outside games (${extra.calls.length})</h2>` +
      extra.calls.map((call) => callHtml(call, null, false)).join(""));
    $("extra").innerHTML = parts.join("");
  }

  // ---------------------------------------------------------------- tabs, keys, live
  function showTab(name) {
    state.tab = name;
    for (const button of document.querySelectorAll("nav button")) button.classList.toggle("active", button.dataset.tab === name);
    for (const id of ["overview", "games", "extra"]) $(id).hidden = id !== name;
    if (name === "extra") renderExtra().catch(reportError);
  }

  function stepGame(delta) {
    const list = state.filtered;
    const at = list.findIndex((g) => g.id === state.game);
    const next = list[Math.max(0, Math.min(list.length - 1, at + delta))];
    if (next) openGame(next.id).catch(reportError);
  }

  function onKey(event) {
    if (state.tab !== "games" || event.target.tagName === "INPUT" && event.target.type === "search") return;
    const steps = { ArrowLeft: -1, ArrowRight: 1 };
    if (event.key in steps) { setPly(state.ply + steps[event.key]); event.preventDefault(); }
    else if (event.key === "Home") setPly(0);
    else if (event.key === "End") setPly(Infinity);
    else if (event.key === "[") stepGame(-1);
    else if (event.key === "]") stepGame(1);
  }

  function reportError(error) {
    $("game-view").insertAdjacentHTML("afterbegin", `<p class="verdict-illegal">${esc(error.message || error)}</p>`);
  }

  async function poll() {
    try {
      const response = await fetch("index.json?t=" + Date.now(), { cache: "no-store" });
      if (response.ok) {
        const fresh = await response.json();
        const grew = fresh.games.length !== index.games.length;
        Object.assign(index, { overview: fresh.overview, games: fresh.games });
        $("live-status").textContent = `live: ${index.games.length} games, updated ${new Date().toLocaleTimeString()}`;
        if (grew) { chunks.clear(); renderOverview(); renderGameList(); }
      }
    } catch (error) {
      $("live-status").textContent = "live: the server does not answer (" + error.message + ")";
    }
    setTimeout(poll, 2000);
  }

  function start() {
    for (const button of document.querySelectorAll("nav button")) button.addEventListener("click", () => showTab(button.dataset.tab));
    $("extra-tab").hidden = !index.extra_chunk;
    $("game-filter").addEventListener("input", renderGameList);
    $("game-list").addEventListener("click", (event) => {
      const row = event.target.closest(".game-row");
      if (row) openGame(Number(row.dataset.game)).catch(reportError);
    });
    document.addEventListener("keydown", onKey);
    renderOverview();
    renderGameList();
    view.openGame = openGame;
    view.setPly = setPly;
    view.showTab = showTab;
    view.ready = true;
    document.body.dataset.ready = "1";
    if (index.live) setTimeout(poll, 2000);
    const wanted = new URLSearchParams(location.search).get("game");
    if (index.games.length) {
      if (wanted !== null || location.hash === "#games") showTab("games");
      openGame(wanted !== null ? Number(wanted) : index.games[0].id).catch(reportError);
    }
  }

  start();
})();
