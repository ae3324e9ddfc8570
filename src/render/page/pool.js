// pool.js — the page of `attn pool` (d2l 10.2, attention pooling): the fits
// (Truth, each result's Pred, the training points) on one chart; pointing
// at a test input there, or at a row of a heatmap, draws that query's
// weights over the training points under the curve, one bar at each
// training x, with the numbers on hover; each result's weights as a
// heatmap; parametric's loss per epoch. The data is --json's document, read
// as it is (doubles, not float32): what the page shows is what --json says.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "training point {0}": "训练点 {0}",
  "test input {0}: x = {1}": "测试输入 {0}：x = {1}",
  "Truth f(x) = {0}": "真实值 f(x) = {0}",
  "null (no training point reaches it)": "null（没有训练点能到达它）",
  "weights of test input {0} (x = {1}), {2}": "测试输入 {0}（x = {1}）的权重，{2}",
  "{0}: test input {1} (x = {2}) → training point {3}": "{0}：测试输入 {1}（x = {2}）→ 训练点 {3}",
  "weight {0} ({1})": "权重 {0}（{1}）",
  "{0}, test input {1}: x = {2}, ": "{0}，测试输入 {1}：x = {2}，",
  "ŷ = Σ weight · y_i = {0}": "ŷ = Σ 权重 · y_i = {0}",
  "no training point reaches it (every weight 0): ŷ is null": "没有训练点能到达它（每个权重都是 0）：ŷ 为 null",
  ", truth {0}": "，真实值 {0}",
  "; its largest weight {0}.": "；它的最大权重 {0}。",
  "the fits: drag along x, or ← →, to move the query": "拟合曲线：沿 x 拖动，或按 ← →，移动查询",
  "test input {0} (x = {1}) → training point {2} (x = {3}, y = {4})": "测试输入 {0}（x = {1}）→ 训练点 {2}（x = {3}，y = {4}）",
  "Nadaraya–Watson regression as attention pooling: each test input is a query, the training inputs are the keys and their y the values; ŷ is the weighted sum of the values. Point at a test input on the fits (or at a row of a heatmap below) to draw its weights over the training points under the curve; drag along x on the fits or on the weights and they follow the query (it snaps to the nearest of the {0} test inputs: the weights shown are --json's, exactly); hover a bar for its numbers.": "Nadaraya-Watson 核回归即注意力汇聚：每个测试输入是查询，训练输入是键，它们的 y 是值；ŷ 是值的加权和。指向拟合曲线上的某个测试输入（或下面热图的一行），在曲线下画出它在各训练点上的权重；在拟合曲线或权重上沿 x 拖动，权重随查询移动（对齐到 {0} 个测试输入中最近的一个：显示的权重与 --json 的完全相同）；悬停在柱上看它的数。",
  "One heatmap per result: rows the test inputs (queries), columns the training inputs (keys), one colour scale. Hover a cell for its weight; a row is that query's weights.": "每个结果一张热图：行是测试输入（查询），列是训练输入（键），同一色标。悬停在单元格上看权重；一行就是该查询的权重。",
  "the weight; the row's weights drawn under the fits": "权重；该行的权重画在拟合曲线下",
  "no epoch: w stays where it starts": "没有周期：w 保持初值",
  "epoch {0}": "周期 {0}",
  "w starts at {0} and ends at {1} after {2} {3} of SGD; each training point's keys and values are the other n − 1. Each loss is the one before its epoch's step, as the book prints it.": "w 从 {0} 开始，经 {2} 个周期的 SGD 后为 {1}；每个训练点的键和值是其余 n − 1 个。每个损失是该周期更新之前的，与书中打印的一致。",
  "no truth": "无真实值",
  "As attn prints them: each result's error against the truth and how peaked its weights are.": "与 attn 打印的一样：每个结果相对真实值的误差，以及其权重有多集中。",
  "weights": "权重",
  "training points": "训练点",
  "x (training inputs)": "x（训练输入）",
  "loss (summed over the training points)": "损失（对训练点求和）",
  "epoch": "周期",
});

// A list of --json numbers (null: no prediction) as doubles, NaN for null.
function poolNumbers(v) {
  return Float64Array.from(v.flat(Infinity), (x) => (x === null ? NaN : x));
}

function poolPage(root, data, pg) {
  const xs = poolNumbers(data.x_train), ys = poolNumbers(data.y_train), xt = poolNumbers(data.x_test);
  const truth = data.y_truth ? poolNumbers(data.y_truth) : null;
  const n = xs.length, m = xt.length, res = data.results;
  const W = res.map((r) => poolNumbers(r.attention_weights)); // each (m, n)
  const yhat = res.map((r) => poolNumbers(r.y_hat));
  const names = pg.names, color = (k) => PALETTE[(k + 1) % PALETTE.length];
  const state = {result: res.length - 1, test: Math.floor(m / 2), dragging: null};
  attnPage.state.kind = "pool";
  attnPage.state.pool = state;

  // the fits: Truth, each result's Pred (the book's legend, English in
  // every language), the training points as circles
  const series = [];
  if (truth) series.push({name: "Truth", x: xt, y: truth, color: PALETTE[0]});
  // (few test inputs: each Pred a point too, so that one between two without
  // a prediction shows)
  res.forEach((r, k) => series.push({name: `Pred (${names[k]})`, x: xt, y: yhat[k], color: color(k), dash: [6, 3],
                                     points: m <= 30}));
  series.push({name: "training points", x: xs, y: ys, color: "rgba(127,127,127,0.6)", points: true, line: false});
  const nameOf = (si) => (truth && si === 0 ? "Truth" : si === series.length - 1 ? "training" : names[si - (truth ? 1 : 0)]);
  const fits = lineChart({
    name: "fits", series, xlabel: "x", ylabel: "y", width: 760, height: 320, clip: true,
    xlim: pg.xlim || undefined, ylim: pg.ylim || undefined,
    describe: (si, i) => {
      const what = nameOf(si);
      if (what === "training") return [locf("training point {0}", i), `x = ${fmtG9(xs[i])}, y = ${fmtG9(ys[i])}`];
      if (what === "Truth") return [locf("test input {0}: x = {1}", i, fmtG9(xt[i])), locf("Truth f(x) = {0}", fmtG9(truth[i]))];
      const k = si - (truth ? 1 : 0);
      return [locf("test input {0}: x = {1}", i, fmtG9(xt[i])),
              `${what}: ŷ = ${Number.isFinite(yhat[k][i]) ? fmtG9(yhat[k][i]) : loc("null (no training point reaches it)")}`];
    }});
  const xlim = pg.xlim || poolRange(xs, xt);

  // the chosen query's weights, under the fits
  const weightsBox = el("div");
  const said = el("p", {class: "note", "data-pool": "query", "aria-live": "polite"});
  const slider = el("input", {type: "range", min: "0", max: String(m - 1), value: String(state.test),
                              "data-control": "test", "aria-label": loc("test input (query)")});
  const buttons = res.map((r, k) => el("button", {class: "seg-btn", type: "button", "data-result": String(k), text: names[k],
                                                  on: {click: () => choose(k, state.test)}}));
  function drawWeights() {
    const k = state.result, j = state.test, row = W[k].subarray(j * n, (j + 1) * n);
    let top = 0;
    for (const v of row) top = Math.max(top, v);
    const chart = lineChart({
      name: "weights", xlabel: "x (training inputs)", ylabel: "weight", width: 760, height: 200, xlim,
      ylim: [0, top > 0 ? top * 1.1 : 1],
      series: [{name: `weights of test input ${j} (x = ${fmtShort(xt[j])}), ${names[k]}`,
                label: locf("weights of test input {0} (x = {1}), {2}", j, fmtShort(xt[j]), names[k]),
                x: xs, y: row, color: color(k), bars: true}],
      describe: (si, i) => [locf("{0}: test input {1} (x = {2}) → training point {3}", names[k], j, fmtG9(xt[j]), i),
                            `x = ${fmtG9(xs[i])}, y = ${fmtG9(ys[i])}`,
                            locf("weight {0} ({1})", fmt4(row[i]), fmtG9(row[i]))]});
    chart.setCursor(xt[j]);
    weightsBox.replaceChildren(chart.node);
    const y = yhat[k][j];
    said.textContent = locf("{0}, test input {1}: x = {2}, ", names[k], j, fmtG9(xt[j])) +
      (Number.isFinite(y) ? locf("ŷ = Σ weight · y_i = {0}", fmtG9(y)) : loc("no training point reaches it (every weight 0): ŷ is null")) +
      (truth ? locf(", truth {0}", fmtG9(truth[j])) : "") + locf("; its largest weight {0}.", fmt4(top));
    state.weights = Array.from(row);
  }
  function choose(k, j) {
    if (k === state.result && j === state.test && state.weights) return;
    state.result = k;
    state.test = j;
    slider.value = String(j);
    buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(i === k)));
    fits.setCursor(xt[j]);
    drawWeights();
  }
  slider.addEventListener("input", () => choose(state.result, Number(slider.value)));
  // the test input nearest x: the query the pointer means
  const nearest = (x) => {
    let best = 0;
    for (let j = 1; j < m; j++) if (Math.abs(xt[j] - x) < Math.abs(xt[best] - x)) best = j;
    return best;
  };
  // pointing at the fits: the test input nearest the pointer's x
  fits.canvas.addEventListener("mousemove", (e) => {
    if (!state.dragging) choose(state.result, nearest(fits.xAt(e.clientX)));
  });
  poolDrag(fits.canvas, () => fits, nearest, (j) => choose(state.result, j), state);
  poolDrag(weightsBox, () => attnPage.charts.weights, nearest, (j) => choose(state.result, j), state);
  // the fits focused: ← → move the query one test input
  fits.canvas.tabIndex = 0;
  fits.canvas.setAttribute("aria-label", loc("the fits: drag along x, or ← →, to move the query"));
  fits.canvas.addEventListener("keydown", (e) => {
    const step = {ArrowLeft: -1, ArrowRight: 1}[e.key];
    if (!step) return;
    e.preventDefault();
    choose(state.result, Math.max(0, Math.min(m - 1, state.test + step)));
  });

  // the heatmaps: rows the test inputs (queries), columns the training inputs (keys)
  const cm = colormap(pg.cmap), colors = lut32(cm.lut);
  let vmin = Infinity, vmax = -Infinity;
  for (const w of W) for (const v of w) { vmin = Math.min(vmin, v); vmax = Math.max(vmax, v); }
  const cell = cellSize(m, n, 260, 24), tx = Array.from(xs, fmtShort), ty = Array.from(xt, fmtShort);
  const panels = res.map((r, k) => heatPanel({
    name: names[k], title: names[k], rows: m, cols: n, cell, values: W[k], colors, vmin, vmax, xt: tx, yt: ty, sparse: true,
    describe: (i, c, v) => [names[k], locf("test input {0} (x = {1}) → training point {2} (x = {3}, y = {4})",
                                           i, fmtG9(xt[i]), c, fmtG9(xs[c]), fmtG9(ys[c])),
                            locf("weight {0} ({1})", fmt4(v), fmtG9(v))],
    onSelect: (i) => choose(k, i)}));

  root.append(
    section("The fits, and one query's weights",
            locf("Nadaraya–Watson regression as attention pooling: each test input is a query, the training inputs are " +
            "the keys and their y the values; ŷ is the weighted sum of the values. Point at a test input on the " +
            "fits (or at a row of a heatmap below) to draw its weights over the training points under the curve; " +
            "drag along x on the fits or on the weights and they follow the query (it snaps to the nearest of the " +
            "{0} test inputs: the weights shown are --json's, exactly); hover a bar for its numbers.", m),
            el("div", {class: "controls"}, el("span", {class: "note", text: loc("weights of")}), el("span", {class: "seg"}, ...buttons)),
            el("div", {class: "controls"}, el("label", {text: loc("test input ")}, slider)),
            fits.node, said, weightsBox),
    section("Attention weights", "One heatmap per result: rows the test inputs (queries), columns the training " +
            "inputs (keys), one colour scale. Hover a cell for its weight; a row is that query's weights.",
            el("div", {class: "grid-and-bar"}, el("div", {class: "row"}, ...panels.map((p) => p.node)),
               colorbar(cm.lut, vmin, vmax, loc("weight"), false)),
            el("div", {class: "axis-note", text: locf("rows: {0} · columns: {1}", loc(pg.ylabel), loc(pg.xlabel))}),
            keysNote([["hover", "the weight; the row's weights drawn under the fits"], ["← ↑ → ↓", "move the highlighted cell"]])),
    ...poolTraining(res, names),
    section("Results", "As attn prints them: each result's error against the truth and how peaked its weights are.",
            poolTable(res, names)));
  buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(i === state.result)));
  fits.setCursor(xt[state.test]);
  drawWeights();
}

// Dragging along x on node (a pointer pressed there, held): each move
// sets the query to the test input nearest the pointer's x on chart(),
// also beyond the node's edges (the pointer captured) until it is let go.
function poolDrag(node, chart, nearest, set, state) {
  node.style.touchAction = "none";
  const move = (e) => {
    if (state.dragging !== e.pointerId) return;
    set(nearest(chart().xAt(e.clientX)));
  };
  node.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    state.dragging = e.pointerId;
    node.setPointerCapture(e.pointerId);
    node.classList.add("dragging");
    move(e);
  });
  node.addEventListener("pointermove", move);
  const end = (e) => {
    if (state.dragging !== e.pointerId) return;
    state.dragging = null;
    node.classList.remove("dragging");
    if (node.hasPointerCapture(e.pointerId)) node.releasePointerCapture(e.pointerId);
  };
  node.addEventListener("pointerup", end);
  node.addEventListener("pointercancel", end);
}

// [lo, hi] over the values of a and b.
function poolRange(a, b) {
  let lo = Infinity, hi = -Infinity;
  for (const v of a) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  for (const v of b) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
}

// Parametric's training: the loss per epoch and the book's lines.
function poolTraining(res, names) {
  const out = [];
  res.forEach((r, k) => {
    if (r.method !== "parametric") return;
    const E = r.losses.length, ep = Array.from({length: E}, (_, e) => e + 1);
    const lines = r.losses.map((l, e) => `epoch ${e + 1}, loss ${l.toFixed(6)}`).join("\n") || loc("no epoch: w stays where it starts");
    const chart = E ? lineChart({name: "loss", series: [{name: "loss (summed over the training points)", x: ep, y: r.losses}],
                                 points: true, xlabel: "epoch", ylabel: "loss", width: 560, height: 240,
                                 describe: (si, e) => [locf("epoch {0}", e + 1), locf("loss {0}", r.losses[e].toFixed(6))]}) : null;
    out.push(section(locf("Training: {0}", names[k]),
                     locf("w starts at {0} and ends at {1} after {2} {3} " +
                     "of SGD; each training point's keys and values are the other n − 1. Each loss is the one before " +
                     "its epoch's step, as the book prints it.", r.w_init.toFixed(6), r.w.toFixed(6), E, E === 1 ? "epoch" : "epochs"),
                     chart ? chart.node : null, el("pre", {class: "output", "data-pool": "losses", text: lines})));
  });
  return out;
}

function poolTable(res, names) {
  const table = el("table", {class: "data", "data-table": "results"},
    el("tr", {}, ...["result", "MSE against the truth", "mean largest weight", "w"].map((h) => el("th", {text: loc(h)}))));
  res.forEach((r, k) => table.append(el("tr", {"data-result": String(k)}, el("td", {text: names[k]}),
    el("td", {text: r.mse === null ? loc("no truth") : r.mse.toFixed(6)}),
    el("td", {text: r.mean_max_weight === null ? "—" : r.mean_max_weight.toFixed(6)}),
    el("td", {text: r.method === "parametric" ? `${r.w_init.toFixed(6)} → ${r.w.toFixed(6)}` : ""}))));
  return table;
}
