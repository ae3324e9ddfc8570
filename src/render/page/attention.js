// attention.js — attention weights as --png lays them out (rows = examples
// or layers, columns = heads), one colour scale, hover for the numbers,
// click to enlarge; and a head view in BertViz's manner: the tokens in
// two columns joined by lines whose opacity is the weight, one colour per
// head, heads toggled by their colour, a token hovered shows its lines.
//
// spec = {rows: [{name, query_tokens, key_tokens, valid_lens, query}],
//         heads, Nq, Nk, weights (Float32Array, rows × heads × Nq × Nk),
//         causal, cmap, vmin, vmax, xlabel, ylabel,
//         preview ({index, gr, gc}: a large page's grids of colour-map
//         entries, drawn while weights is still null; page.h),
//         qname, kname (what the tooltip calls a query and a key: "query"
//         and "key" unless given), framed(q, k) (cells drawn with a frame,
//         and the tooltip line that says why: framedNote(q, k)), average
//         (one more panel a row: the heads' mean, as alignment scores read
//         it), headName(h) (what a panel's head is called: "head h+1"
//         unless given, e.g. a model with one attention), column (what the
//         columns are, in the page's text: "head" unless given)}
// A row's `query` (apple: 苹果's position) shows only that query's row.
// A row's `head_valid_lens` (one per head: a length, or one per query)
// masks each of its panels by its own lengths instead of the row's
// valid_lens (attn score: a row per scoring function, a panel per example).

const HEAD_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf",
                     "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f", "#393b79", "#637939"];

// A row as the page shows it: its label, or its name ("row 0", the data's)
// in the page's language (row.name stays the panels' name, data-panel).
function rowLabel(row) {
  const m = /^(row|example|layer) (\d+)$/.exec(row.name);
  return row.label || (m ? locf(`${m[1]} {0}`, m[2]) : row.name);
}

function tokenAt(list, i) {
  return list ? String(list[i]) : String(i);
}

// Whether key k of query q in head h of row r is masked, and why (or null).
function maskReason(row, causal, q, k, h) {
  const vl = row.head_valid_lens && h >= 0 ? row.head_valid_lens[h] : row.valid_lens;
  const len = Array.isArray(vl) ? vl[q] : vl;
  if (len !== null && len !== undefined && k >= len) return locf("valid_len {0}", len);
  if (causal && k > q) return loc("causal: a key after the query");
  return null;
}

// out (rows, n) = the mean over the heads of w (rows, heads, n).
function headsMean(out, w, rows, heads, n) {
  for (let r = 0; r < rows; r++)
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let h = 0; h < heads; h++) sum += w[(r * heads + h) * n + i];
      out[r * n + i] = sum / heads;
    }
}

function attentionGrid(spec) {
  const {Nq, Nk, heads} = spec;
  const ncols = heads + (spec.average ? 1 : 0); // panels a row
  const colors = lut32(spec.cmap.lut);
  const grid = el("div", {class: "grid", style: `grid-template-columns: repeat(${heads}, auto)`});
  const panels = [];
  const given = (vl) => vl !== null && vl !== undefined;
  const anyMask = spec.causal || spec.rows.some((r) => given(r.valid_lens) || given(r.head_valid_lens));
  const focusRows = spec.rows.some((r) => r.query !== undefined);
  // panels side by side in the page's width, beside the colour bar
  // (long sequences: thumbnails of `room` pixels, in as many columns as
  // fit, as BertViz's model view; click one to see every cell)
  // one width for every panel's query labels, so that the panels align
  const allY = [];
  for (const row of spec.rows)
    if (row.query !== undefined) allY.push(tokenAt(row.query_tokens, row.query));
    else for (let i = 0; i < Nq; i++) allY.push(tokenAt(row.query_tokens, i));
  const ytWidth = labelWidth(allY, 96);
  // each panel sized to its tokens (heatmap.js's gridLayout)
  const width = Math.min(window.innerWidth, 1400) - 200;
  const {cell, thumb, columns} = gridLayout(Math.max(focusRows ? 1 : Nq, Nk), ncols, width, ytWidth);
  grid.style.gridTemplateColumns = `repeat(${columns}, auto)`;
  const view = {node: null, panels, weights: spec.weights, pending: null};
  // the numbers behind the selected weight, beside the panels
  const path = spec.path ? cellPathAside(spec) : null;
  const offsetOf = (r, h, q0) => ((r * heads + h) * Nq + (q0 || 0)) * Nk;
  // the heads' mean of each row (spec.average), made from the weights
  const avg = spec.average ? new Float32Array(spec.rows.length * Nq * Nk) : null;
  const average = () => headsMean(avg, view.weights, spec.rows.length, heads, Nq * Nk);
  if (avg) average();
  // what panel (r, h) draws: [values, offset]; h −1 is the heads' mean
  const source = (r, h) => {
    const q0 = spec.rows[r].query || 0;
    return h < 0 ? [avg, (r * Nq + q0) * Nk] : [view.weights, offsetOf(r, h, q0)];
  };
  // a panel's head: its name (data-panel, in English) and as the page says it
  const headKey = (h) => (h < 0 ? "heads averaged" : spec.headName ? spec.headName(h) : `head ${h + 1}`);
  const headName = (h) => (h < 0 ? loc("heads averaged") : spec.headName ? loc(spec.headName(h)) : locf("head {0}", h + 1));
  const qname = loc(spec.qname || "query"), kname = loc(spec.kname || "key");
  const describer = (r, h) => (qi, k, v) => {
    const row = spec.rows[r], q = row.query !== undefined ? row.query : qi;
    const why = maskReason(row, spec.causal, q, k, h);
    const lines = [`${rowLabel(row)} · ${h < 0 ? locf("the {0} heads averaged", heads) : headName(h)}`,
                   `${qname} ${q} “${tokenAt(row.query_tokens, q)}” → ${kname} ${k} “${tokenAt(row.key_tokens, k)}”`,
                   v === null ? loc("weight: still loading (the page is reading its data)")
                   : why ? locf("masked ({0}): weight {1} (float32 {2})", why, fmt4(v), fmtG9(v))
                       : locf("weight {0}   float32 {1}", fmt4(v), fmtG9(v))];
    if (spec.framed && spec.framed(q, k) && spec.framedNote) lines.push(spec.framedNote(q, k));
    return lines;
  };
  const framer = (r) => spec.framed && ((qi, k) => {
    const row = spec.rows[r];
    return spec.framed(row.query !== undefined ? row.query : qi, k);
  });
  // null when nothing is masked: the panels then paint each cell as one fill
  const masker = (r, h) => anyMask && ((qi, k) => {
    const row = spec.rows[r];
    return maskReason(row, spec.causal, row.query !== undefined ? row.query : qi, k, h) !== null;
  });
  // a preview's block (i, j) of row r: the share of its cells masked
  const pv = spec.preview && !focusRows && !spec.average ? spec.preview : null;
  const blockMasked = (r, h) => anyMask && ((i, j) => {
    const q0 = Math.floor(i * Nq / pv.gr), q1 = Math.floor((i + 1) * Nq / pv.gr);
    const k0 = Math.floor(j * Nk / pv.gc), k1 = Math.floor((j + 1) * Nk / pv.gc);
    let n = 0;
    for (let q = q0; q < q1; q++)
      for (let k = k0; k < k1; k++) if (maskReason(spec.rows[r], spec.causal, q, k, h)) n++;
    return n / ((q1 - q0) * (k1 - k0));
  });
  // a click before the weights have loaded: the panel opens when they have
  const pick = (r, h) => () => {
    if (view.weights) { enlarge(r, h); return; }
    view.pending = () => enlarge(r, h);
    tooltip.show([loc("The weights are still loading: the panel opens when they have.")],
                 window.innerWidth / 2, window.innerHeight / 3);
  };
  spec.rows.forEach((row, r) => {
    grid.append(el("div", {class: "grid-row-title", style: "grid-column: 1 / -1", text: row.title || rowLabel(row)}));
    for (let c = 0; c < ncols; c++) {
      const h = c < heads ? c : -1, [values, offset] = source(r, h);
      const p = heatPanel({
        name: `${row.name} ${headKey(h)}`, label: `${rowLabel(row)} ${headName(h)}`,
        title: h < 0 ? loc("Heads averaged") : spec.headName ? loc(spec.headName(h)) : locf("Head {0}", h + 1),
        rows: row.query !== undefined ? 1 : Nq, cols: Nk, cell, values, offset,
        colors, vmin: spec.vmin, vmax: spec.vmax, masked: masker(r, h), framed: framer(r), describe: describer(r, h),
        yt: row.query !== undefined ? [tokenAt(row.query_tokens, row.query)]
            : Array.from({length: Nq}, (_, i) => tokenAt(row.query_tokens, i)),
        xt: Array.from({length: Nk}, (_, i) => tokenAt(row.key_tokens, i)),
        onPick: pick(r, h), ytWidth, thumb,
        onSelect: path && ((qi, k) => path.show(r, h, qi, k)),
      });
      if (!view.weights && pv) p.paintPreview(pv.index, (r * heads + h) * pv.gr * pv.gc, pv.gr, pv.gc, blockMasked(r, h));
      p.r = r;
      p.h = h;
      panels.push(p);
      grid.append(p.node);
    }
  });

  // A panel enlarged in a dialog: the same cells, bigger, the same hover.
  function enlarge(r, h) {
    const row = spec.rows[r], rows = row.query !== undefined ? 1 : Nq;
    const big = cellSize(rows, Nk, Math.min(window.innerWidth, window.innerHeight) * 0.7, 64);
    const [values, offset] = source(r, h);
    const bigPath = path ? cellPathAside(spec) : null;
    const p = heatPanel({
      name: `${row.name} ${headKey(h)} (enlarged)`, label: locf("{0} (enlarged)", `${rowLabel(row)} ${headName(h)}`),
      title: `${rowLabel(row)} · ${headName(h)}`,
      rows, cols: Nk, cell: big, values, offset,
      colors, vmin: spec.vmin, vmax: spec.vmax, masked: masker(r, h), framed: framer(r), describe: describer(r, h),
      yt: row.query !== undefined ? [tokenAt(row.query_tokens, row.query)]
          : Array.from({length: Nq}, (_, i) => tokenAt(row.query_tokens, i)),
      xt: Array.from({length: Nk}, (_, i) => tokenAt(row.key_tokens, i)),
      onSelect: bigPath && ((qi, k) => bigPath.show(r, h, qi, k)),
    });
    const close = () => { dlg.remove(); tooltip.hide(); attnPage.state.enlarged = null; };
    const dlg = el("div", {class: "modal", role: "dialog", "aria-modal": "true", "aria-label": loc("enlarged panel"),
                           on: {click: (e) => { if (e.target === dlg) close(); },
                                keydown: (e) => { if (e.key === "Escape") close(); }}},
      el("div", {class: "modal-box"},
         el("button", {class: "close", type: "button", "aria-label": loc("close"), text: "×", on: {click: close}}),
         el("div", {class: "att-main"}, p.node, bigPath ? bigPath.node : null),
         el("p", {class: "note", text: loc("Arrow keys move the highlighted cell; Esc closes.")})));
    document.body.append(dlg);
    attnPage.state.enlarged = p.canvas.dataset.panel;
    p.canvas.focus();
  }

  const labels = el("div", {class: "axis-note"},
                    el("span", {text: locf("rows: {0} · columns: {1}", loc(spec.ylabel || "queries"), loc(spec.xlabel || "keys"))}));
  view.node = el("div", {class: "att-view"},
                 el("div", {class: "att-main"},
                    el("div", {class: "grid-and-bar"}, grid,
                       colorbar(spec.cmap.lut, spec.vmin, spec.vmax, loc("weight"), anyMask)),
                    path ? path.node : null), labels);
  view.update = (weights) => {
    view.weights = weights;
    if (avg) average();
    for (const p of panels) p.redraw(...source(p.r, p.h));
    if (view.headView) view.headView.redraw();
    if (view.pending) {
      const open = view.pending;
      view.pending = null;
      tooltip.hide();
      open();
    }
  };
  return view;
}

// The head view of spec (as attentionGrid's) for one row at a time.
function headView(spec, getWeights) {
  const {Nq, Nk, heads} = spec;
  const n = Math.max(Nq, Nk);
  const rh = n <= 24 ? 24 : n <= 64 ? 14 : Math.max(1, Math.floor(640 / n));
  const W = 520, top = 28, H = top + n * rh + 12, xl = 170, xr = W - 170;
  const canvas = el("canvas", {class: "headview", width: String(W), height: String(H),
                               "data-view": "head view", role: "img",
                               "aria-label": loc("head view: queries on the left, keys on the right")});
  const hv = {row: 0, on: Array(heads).fill(true), focus: null, canvas};
  const state = () => { attnPage.state.headView = {row: hv.row, heads: hv.on.slice(), focus: hv.focus}; };
  const swatches = el("div", {class: "head-swatches"}, el("span", {class: "note", text: locf("{0}s: ", spec.column || "head", loc(spec.column || "head"))}));
  for (let h = 0; h < heads; h++) {
    // the number the panel's title gives it ("example 0"), else h + 1
    const name = spec.headName ? loc(spec.headName(h)) : locf("head {0}", h + 1), num = /\d+$/.exec(name);
    const b = el("button", {type: "button", class: "head-swatch", "data-head": String(h + 1),
                            "aria-pressed": "true", title: locf("{0}: click to hide or show", name),
                            style: `--c:${HEAD_COLORS[h % HEAD_COLORS.length]}`, text: num ? num[0] : String(h + 1)});
    b.addEventListener("click", () => {
      hv.on[h] = !hv.on[h];
      b.setAttribute("aria-pressed", String(hv.on[h]));
      hv.redraw();
    });
    swatches.append(b);
  }
  let chooser = null;
  if (spec.rows.length > 1) {
    chooser = el("select", {"aria-label": loc("row shown in the head view"),
                            on: {change: () => { hv.row = Number(chooser.value); hv.redraw(); }}});
    spec.rows.forEach((r, i) => chooser.append(el("option", {value: String(i), text: rowLabel(r)})));
  }
  const yOf = (i) => top + i * rh + rh / 2;
  hv.redraw = () => {
    const w = getWeights(), row = spec.rows[hv.row];
    const ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, W, H);
    ctx.font = "13px system-ui, sans-serif";
    ctx.fillStyle = "#666";
    ctx.textAlign = "center";
    ctx.fillText(loc("queries"), xl - 60, 14);
    ctx.fillText(loc("keys"), xr + 60, 14);
    // lines: heads that are on, and only the hovered token's when one is;
    // opacity = the weight (BertViz's), or for long sequences the weight
    // against a uniform 1/n, lines under 2/n left out
    const long = n > 64, least = long ? 2 / Nk : 0.004;
    ctx.lineWidth = rh >= 10 ? 2 : 1;
    for (let h = 0; h < heads; h++) {
      if (!hv.on[h]) continue;
      ctx.strokeStyle = HEAD_COLORS[h % HEAD_COLORS.length];
      for (let q = 0; q < Nq; q++) {
        if (row.query !== undefined && q !== row.query) continue;
        if (hv.focus && hv.focus.side === "q" && hv.focus.i !== q) continue;
        const base = ((hv.row * heads + h) * Nq + q) * Nk;
        for (let k = 0; k < Nk; k++) {
          if (hv.focus && hv.focus.side === "k" && hv.focus.i !== k) continue;
          const v = w[base + k];
          if (!(v >= least) || maskReason(row, spec.causal, q, k, h)) continue;
          ctx.globalAlpha = Math.min(1, long ? v * Nk / 8 : v);
          ctx.beginPath();
          ctx.moveTo(xl + 6, yOf(q));
          ctx.lineTo(xr - 6, yOf(k));
          ctx.stroke();
        }
      }
    }
    ctx.globalAlpha = 1;
    if (rh >= 9) {
      for (let q = 0; q < Nq; q++) {
        const f = hv.focus && hv.focus.side === "q" && hv.focus.i === q;
        ctx.fillStyle = f ? "#000" : "#333";
        ctx.font = `${f ? "bold " : ""}${Math.min(14, rh - 8)}px system-ui, sans-serif`;
        ctx.textAlign = "right";
        ctx.fillText(tokenAt(row.query_tokens, q).slice(0, 18), xl, yOf(q) + 4);
      }
      for (let k = 0; k < Nk; k++) {
        const f = hv.focus && hv.focus.side === "k" && hv.focus.i === k;
        ctx.fillStyle = f ? "#000" : "#333";
        ctx.font = `${f ? "bold " : ""}${Math.min(14, rh - 8)}px system-ui, sans-serif`;
        ctx.textAlign = "left";
        ctx.fillText(tokenAt(row.key_tokens, k).slice(0, 18), xr, yOf(k) + 4);
      }
    }
    state();
  };
  canvas.addEventListener("mousemove", (e) => {
    const b = canvas.getBoundingClientRect(), k = W / b.width;
    const x = (e.clientX - b.left) * k, y = (e.clientY - b.top) * k;
    const i = Math.floor((y - top) / rh);
    let focus = null;
    if (x < W / 2 - 60 && i >= 0 && i < Nq) focus = {side: "q", i};
    if (x > W / 2 + 60 && i >= 0 && i < Nk) focus = {side: "k", i};
    if (JSON.stringify(focus) !== JSON.stringify(hv.focus)) { hv.focus = focus; hv.redraw(); }
    const row = spec.rows[hv.row];
    if (focus) tooltip.show([focus.side === "q" ? locf("query {0} “{1}”: its lines", i, tokenAt(row.query_tokens, i))
                                                 : locf("key {0} “{1}”: the lines into it", i, tokenAt(row.key_tokens, i))],
                            e.clientX, e.clientY);
    else tooltip.hide();
  });
  canvas.addEventListener("mouseleave", () => { hv.focus = null; tooltip.hide(); hv.redraw(); });
  hv.node = el("div", {class: "head-view"}, el("div", {class: "head-controls"}, chooser, swatches), canvas);
  hv.redraw();
  return hv;
}

// "2 examples", "1 layer", or the rows' names when they are of other kinds.
function rowsText(rows) {
  const m = rows.map((r) => /^(example|layer) \d+$/.exec(r.name));
  if (m.every((x) => x && x[1] === m[0][1])) return `${rows.length} ${m[0][1]}${rows.length === 1 ? "" : "s"}`;
  return rows.length <= 3 ? rows.map(rowLabel).join(loc(", ")) : locf("{0} rows", rows.length);
}

// The attention page (multihead, selfattn): the grid and the head view.
function attentionPage(root, data, pg) {
  // the weights: a member of the data named by pg.weights, or the tensor itself
  const w = tensor(typeof pg.weights === "string" ? data[pg.weights] : pg.weights);
  // (rows…, NH, Nq, Nk): the leading dimensions are the rows (examples, or
  // a stack's layers × examples)
  const d = w.data;
  let vmin = Infinity, vmax = -Infinity;
  for (let i = 0; i < d.length; i++) {
    const v = d[i];
    if (v < vmin) vmin = v;
    if (v > vmax) vmax = v;
  }
  attentionView(root, pg, w.shape, vmin, vmax, null).complete(d);
}

// A large page's attention page from its preview (page.h): the grid of
// block means drawn at once; returns what draws the rest from the data
// once it has been read.
function attentionPreviewPage(root, pv) {
  const pg = pv.page, p = pv.preview;
  // the float32 the C found, exactly: "%.9g" reads back as the same float32
  const vmin = Math.fround(p.vmin), vmax = Math.fround(p.vmax);
  attnPage.preview = {vmin, vmax, grid: p.grid.slice()};
  // a page this large has no controls: say why, and what it offers
  const n = p.shape.reduce((a, b) => a * b, 1);
  root.append(el("p", {class: "note bert-note", text: locf("No controls on this page: its {0} " +
    "weights are drawn from a preview, and a change would rerun and redraw every one of them, seconds " +
    "each, not a slider's pace. To change it, rerun the command above with other options. What it offers: " +
    "every weight on hover, a panel enlarged on click, the head view.", n.toLocaleString("en"))}));
  const view = attentionView(root, pg, p.shape, vmin, vmax, {index: base64Bytes(p.index), gr: p.grid[0], gc: p.grid[1]});
  // the weights: named by the data's page (the preview's keeps only their shape)
  return (data) => view.complete(tensor(typeof pg.weights === "string" ? data[pg.weights] : data.page.weights).data);
}

// The page's views of weights of `shape` on the scale vmin … vmax: drawn
// from preview until complete(weights) (Float32Array, shape) paints the
// panels from the weights and draws the head view.
function attentionView(root, pg, shape, vmin, vmax, preview) {
  const [NH, Nq, Nk] = shape.slice(-3);
  const spec = {rows: pg.rows, heads: NH, Nq, Nk, weights: null, causal: pg.causal,
                cmap: colormap(pg.cmap), vmin, vmax, xlabel: pg.xlabel, ylabel: pg.ylabel, preview};
  if (pg.titles) spec.headName = (h) => pg.titles[h]; // attn heatmap --titles, attn score
  // each weight's path from --explain, where the command has one
  const argv = pg.command ? liveArgv(pg) : null;
  const paths = argv && CELL_PATHS[argv[0]];
  if (paths) spec.path = paths(argv, pg) || undefined;
  const col = pg.column || "head"; // attn score: a panel per example
  spec.column = col;
  const grid = attentionGrid(spec);
  let hvNode = el("p", {class: "note", text: loc("The head view is drawn once the page has read the weights.")});
  root.append(
    section("Attention weights", locf("{0} × {1} {2}, {3} {4} × {5} {6}; one colour scale from {7} to {8}. " +
            "Hover a cell for its weight; click a panel to enlarge it.", rowsText(pg.rows), NH, col + (NH === 1 ? "" : "s"),
            Nq, Nq === 1 ? "query" : "queries", Nk, Nk === 1 ? "key" : "keys", fmtShort(vmin), fmtShort(vmax),
            loc(col)), grid.node,
            keysNote([["hover", loc("query, key and weight of a cell") +
                       (spec.path ? loc("; beside the panels, the numbers behind it") : "")],
                      ["click / Enter", loc("enlarge a panel")],
                      ["← ↑ → ↓", loc("move the highlighted cell (in a focused panel)")],
                      ["Esc", loc("close the enlarged panel")]])),
    section("Head view", locf("Queries on the left, keys on the right; a line's opacity is the weight, one colour per " +
            "{0}. Click a colour to hide or show its {0}; hover a token to see only its lines.", col, loc(col)), hvNode));
  attnPage.state.kind = "attention";
  attnPage.state.grid = grid;
  return {
    complete(weights) {
      grid.update(weights);
      const hv = headView(spec, () => grid.weights);
      grid.headView = hv;
      hvNode.replaceWith(hv.node);
      hvNode = hv.node;
    },
  };
}

// ---- the numbers behind a weight (SPEC §14) ------------------------------
// `attn ARGV --explain --json -` run by the page's module, once per
// command: its "explain" member (cmd/attention/explain_json.h) holds every
// cell's path, the numbers --explain prints.

const explainRuns = new Map(); // JSON of argv (and stdin) → a promise of the document

// argv's --explain --json document, run once; stdin: the run's standard
// input (a model file's text), or undefined.
function explainDoc(argv, stdin) {
  const key = JSON.stringify([argv, stdin === undefined ? null : stdin]);
  if (!explainRuns.has(key)) {
    if (explainRuns.size >= 8) explainRuns.delete(explainRuns.keys().next().value);
    const words = argv.includes("--explain") ? argv : [...argv, "--explain"];
    explainRuns.set(key, attnLive.run(words, {stdin}).then((text) => JSON.parse(text)));
  }
  return explainRuns.get(key);
}

// A number as the path shows it (data-v: the module's own, exactly).
function pathNum(x) {
  return el("span", {class: "cp-num", "data-v": String(x),
                     text: Math.abs(x) >= 1e5 ? fmtShort(x) : fmt4(x)});
}

// [a, b, …] of the first entries, "…" when the vector has more.
function pathVec(xs, n) {
  const parts = ["["];
  xs.forEach((x, i) => parts.push(i ? ", " : "", pathNum(x)));
  parts.push(n > xs.length ? ", …]" : "]");
  return el("span", {class: "cp-vec"}, ...parts);
}

function pathLine(part, label, ...rest) {
  return el("div", {class: "cp-line", "data-part": part}, el("span", {class: "cp-label", text: label}), ...rest);
}

// The path of one cell, drawn from c, a command's numbers for it:
//   {p, first (entries shown), qName, kName, vName, q, k, v (vectors),
//    score, dot: {scale, scaled} or additive: {hiddens, first, qa, ka,
//    tanh, w_v}, masked, why, maskedScore, rowMax, rowSumExp, weight,
//    outputName, output}
// and, optional: qLabel (the q line's label), kSize, vSize (the sizes of k,
// and of v and the output, when not p), scoringLines ([[part, label,
// number or vector, the vector's size], …] drawn instead of the dot or
// additive lines: attn score's general and sum scores, score_path.js)
// multihead's and selfattn's from examplePath; a command whose views show
// other weights (score, train, translate) gives its own (spec.path.at).
function pathLines(c) {
  const F = c.first, P = c.p, KP = c.kSize || P, VP = c.vSize || P;
  const lines = [
    pathLine("q", c.qLabel || `q = ${c.qName} (${F < P ? locf("first {0} of ", F) : ""}p = ${P})`, pathVec(c.q, P)),
    pathLine("k", `k = ${c.kName}`, pathVec(c.k, KP))];
  if (c.scoringLines) {
    for (const [part, label, x, n] of c.scoringLines)
      lines.push(pathLine(part, label, Array.isArray(x) ? pathVec(x, n) : pathNum(x)));
  } else if (c.dot) {
    lines.push(pathLine("score", "q·k =", pathNum(c.score)),
               pathLine("scaled", `÷ √${P} = ${fmt4(c.dot.scale)} →`, pathNum(c.dot.scaled)));
  } else {
    const a = c.additive, FA = a.first, more = a.hiddens;
    lines.push(pathLine("qa", `W_q q (${FA < more ? locf("first {0} of ", FA) : ""}${more})`, pathVec(a.qa, more)),
               pathLine("ka", "W_k k", pathVec(a.ka, more)),
               pathLine("tanh", "tanh(W_q q + W_k k)", pathVec(a.tanh, more)),
               pathLine("w_v", "w_v", pathVec(a.w_v, more)),
               pathLine("score", "w_vᵀ tanh(…) =", pathNum(c.score)));
  }
  lines.push(c.masked ? pathLine("mask", locf("masked ({0}): the score becomes", c.why || loc("masked")), pathNum(c.maskedScore))
                      : pathLine("mask", loc("not masked: the score stays"), pathNum(c.maskedScore)),
             pathLine("row_max", loc("row max m ="), pathNum(c.rowMax)),
             pathLine("row_sum_exp", "Σⱼ e^(sⱼ − m) =", pathNum(c.rowSumExp)),
             pathLine("weight", loc(c.masked ? "weight e^(s − m) / Σ (masked) =" : "weight e^(s − m) / Σ ="), pathNum(c.weight)),
             pathLine("v", `v = ${c.vName}`, pathVec(c.v, VP)),
             pathLine("output", c.outputName, pathVec(c.output, VP)));
  return lines;
}

// Cell (b, h, q, k) of a multihead or selfattn --explain --json document
// (cmd/attention/explain_json.h), for pathLines.
function examplePath(doc, spec, row, b, h, q, k) {
  const e = doc.explain;
  const c = {p: e.p, first: e.first, qName: `Q_${h + 1}[${q}]`, kName: `K_${h + 1}[${k}]`, vName: `V_${h + 1}[${k}]`,
             q: e.q[b][h][q], k: e.k[b][h][k], v: e.v[b][h][k], score: e.scores[b][h][q][k],
             masked: e.masked[b][h][q][k] === 1, why: maskReason(row, spec.causal, q, k, h),
             maskedScore: e.masked_scores[b][h][q][k], rowMax: e.row_max[b][h][q], rowSumExp: e.row_sum_exp[b][h][q],
             weight: doc.attention_weights[b][h][q][k], outputName: locf("output of query {0}, Σⱼ wⱼ vⱼ", q),
             output: e.head_output[b][h][q]};
  if (e.score === "dot") c.dot = {scale: e.scale, scaled: e.scaled[b][h][q][k]};
  else c.additive = {hiddens: e.hiddens, first: e.first_hiddens, qa: e.qa[b][h][q], ka: e.ka[b][h][k],
                     tanh: e.tanh[b][h][q][k], w_v: e.w_v};
  return c;
}

// multihead's and selfattn's spec.path: panel (r, h) is example b's head h.
function examplesPath(argv) {
  return {
    argv,
    cell: (spec, r, h, q, k) => `${Number(/\d+$/.exec(spec.rows[r].name)[0])},${h},${q},${k}`,
    at: (doc, spec, r, h, q, k) => examplePath(doc, spec, spec.rows[r], Number(/\d+$/.exec(spec.rows[r].name)[0]),
                                               h, q, k),
  };
}

// A row that is one example, as the C names it: "example 0" (样本 0 under --lang zh).
const EXAMPLE_ROW = /^(example|样本) \d+$/;

// The commands whose attention views give a cell's path: name → (argv, pg)
// → a spec.path, or null where this page's views have none. A command
// registers itself here (its own file, loaded after this one).
const CELL_PATHS = {
  multihead: (argv, pg) => pg.rows.every((r) => EXAMPLE_ROW.test(r.name)) ? examplesPath(argv) : null,
  selfattn: (argv, pg) => pg.rows.every((r) => EXAMPLE_ROW.test(r.name)) ? examplesPath(argv) : null,
};

// The aside of a grid: show(r, h, qi, k) fills it with that cell's path,
// computed by the module. spec.path = {
//   argv            its command, run once with --explain --json -
//   stdin           (optional) that run's standard input
//   doc()           (optional) a promise of the document, instead of argv's run
//   loading         (optional) the text shown while the document is computed
//   watch(redo)     (optional) redo() is called when the document changes
//                   (the cell shown is shown again from the new one)
//   cell(spec, r, h, q, k)  the cell's name (data-cell)
//   at(doc, spec, r, h, q, k)  its numbers for pathLines}.
function cellPathAside(spec) {
  const hint = loc("Hover a weight, or focus a panel (Tab) and move with the arrow keys: " +
                   "its path from q and k to the weight appears here.");
  const body = el("div", {class: "cp-body"}, el("p", {class: "note", text: hint}));
  const head = el("div", {class: "cp-head", text: loc("The numbers behind a weight")});
  const node = el("aside", {class: "cellpath", "aria-live": "polite", "aria-label": loc("the numbers behind the weight"),
                            "data-state": "idle"}, head, body);
  let serial = 0, last = null;
  const show = async (r, h, qi, k) => {
    const mine = ++serial, row = spec.rows[r];
    last = [r, h, qi, k];
    const q = row.query !== undefined ? row.query : qi;
    const set = (state, ...children) => {
      node.dataset.state = state;
      body.replaceChildren(...children);
    };
    node.dataset.cell = spec.path.cell(spec, r, h, q, k);
    const hname = h < 0 ? loc("heads averaged") : spec.headName ? loc(spec.headName(h)) : locf("head {0}", h + 1);
    head.textContent = `${rowLabel(row)} · ${hname} · ${loc(spec.qname || "query")} ${q} ` +
                       `“${tokenAt(row.query_tokens, q)}” → ${loc(spec.kname || "key")} ${k} “${tokenAt(row.key_tokens, k)}”`;
    if (h < 0) return set("none", el("p", {class: "note", text: loc("The heads' mean has no path of its own: hover a head.")}));
    set("loading", el("p", {class: "note", text: spec.path.loading || loc("computing the path (attn … --explain)…")}));
    try {
      const doc = await (spec.path.doc ? spec.path.doc() : explainDoc(spec.path.argv, spec.path.stdin));
      if (mine === serial) set("shown", ...pathLines(spec.path.at(doc, spec, r, h, q, k)));
    } catch (err) {
      if (mine === serial) set("error", el("p", {class: "note", text: err.message}));
    }
  };
  if (spec.path.watch) spec.path.watch(() => { if (last) show(...last); });
  return {node, show};
}
