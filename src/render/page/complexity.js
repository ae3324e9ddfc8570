// complexity.js — the page of `attn complexity`: the chapter's table for
// the run's n, d, k, the cost of each layer against n on log-log axes (the
// formulas), and with --measure the timed layers with their fitted growth
// exponents. Every number comes from the data; the page only lays it out.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "convolution": "卷积",
  "recurrent": "循环",
  "self-attention": "自注意力",
  "self attention": "自注意力",
  "restricted attn": "受限注意力",
  "restricted": "受限",
  "restricted self attention": "受限自注意力",
  "dilated conv": "空洞卷积",
  "dilated convolution": "空洞卷积",
  "Self-attention costs more than a recurrent layer once {0} (n ≥ {1} by the O() terms for d = {2}), and more than a convolution once {3} (n ≥ {4}).": "当 {0} 时自注意力的代价高于循环层（按 d = {2} 时的 O() 项，n ≥ {1}），当 {3} 时高于卷积（n ≥ {4}）。",
  "n = {0}, d = {1}: {2} multiply-adds": "n = {0}，d = {1}：{2} 次乘加",
  "The chapter's comparison at n = {0}, d = {1}, k = {2}": "本章的比较：n = {0}，d = {1}，k = {2}",
  "Per layer type: its computational complexity, the multiply-adds it means for these sizes, its sequential operations and its maximum path length (as a formula, and measured through real layers).": "每种层：它的计算复杂度、在这些大小下的乘加次数、顺序操作数和最大路径长度（公式，以及在真实的层上实测）。",
  "The O() terms on log-log axes: a slope is an exponent of n. The dashed line is the table's n = {0}. Hover a point for its numbers.": "双对数坐标上的 O() 项：斜率是 n 的指数。虚线是表中的 n = {0}。悬停在点上看它的数。",
  "{0}: slope {1} (theory {2})": "{0}：斜率 {1}（理论 {2}）",
  "time per layer ({0})": "每层时间（{0}）",
  "n = {0}: {1} ({2} time)": "n = {0}：{1}（{2} 时间）",
  "{0} multiply-adds": "{0} 次乘加",
  "fitted exponent ({0})": "拟合的指数（{0}）",
  "Real layers timed for n = {0} with d = {1} (median of {2}); the exponent is fitted over n = {3} … {4}. Hover a point for n and the time.": "在 n = {0}、d = {1} 时为真实的层计时（{2} 次的中位数）；指数在 n = {3} … {4} 上拟合。悬停在点上看 n 和时间。",
  "Run with --measure to time real layers over a sweep of n and fit their exponents.": "用 --measure 运行，在一系列 n 上为真实的层计时并拟合它们的指数。",
  "n (sequence length)": "n（序列长度）",
  "multiply-adds (O() term)": "乘加次数（O() 项）",
  "cost": "代价",
  "measured": "实测",
  "{0} layers": "{0} 层",
  "{0} layer": "{0} 层",
  "{0} step": "{0} 步",
  "cpu": "CPU",
  "wall": "墙钟",
});

const LAYER_COLORS = {convolution: "#1f77b4", recurrent: "#ff7f0e", self_attention: "#d62728",
                      restricted_self_attention: "#9467bd", dilated_convolution: "#2ca02c"};

function fmtTime(s) {
  if (s >= 1) return s.toFixed(2) + " s";
  if (s >= 1e-3) return (s * 1e3).toFixed(2) + " ms";
  return (s * 1e6).toFixed(1) + " µs";
}

function fmtCount(v) {
  return v >= 1e6 ? v.toExponential(2).replace("e+", "e") : String(v);
}

// A layer's name as the data gives it ("dilated conv, k = 3"), its kind in
// the page's language.
function layerText(name) {
  return name.replace(/^(restricted self attention|dilated convolution|restricted attn|self-attention|self attention|dilated conv|convolution|recurrent|restricted)\b/,
                      (m) => loc(m));
}

function complexityPage(root, data) {
  const {n, d, k, r} = data;
  const table = el("table", {class: "data", "data-table": "layers"},
    el("tr", {}, ...["layer", "complexity", "multiply-adds", "sequential", "max path", "path formula", "measured path"]
      .map((h) => el("th", {text: loc(h)}))));
  for (const L of data.layers)
    table.append(el("tr", {"data-layer": L.layer},
      el("td", {text: layerText(L.name)}), el("td", {text: L.complexity}), el("td", {text: fmtCount(L.multiply_adds)}),
      el("td", {text: `${L.sequential_operations} = ${L.sequential_operations_value}`}),
      el("td", {text: L.max_path_length}), el("td", {text: `${L.path_formula} = ${L.path_formula_value}`}),
      el("td", {text: locf(`{0} ${L.path_measured === 1 ? L.path_unit.replace(/s$/, "") : L.path_unit}`, L.path_measured)})));
  const cx = data.self_attention_costlier;
  const cross = el("p", {class: "note",
    text: locf("Self-attention costs more than a recurrent layer once {0} " +
               "(n ≥ {1} by the O() terms for d = {2}), and more than a convolution once {3} (n ≥ {4}).",
               cx.than_recurrent.rule, cx.than_recurrent.big_o_n, d, cx.than_convolution.rule, cx.than_convolution.big_o_n)});

  // the O() terms against n: where the lines cross is where the cost turns
  const ns = [];
  for (let e = 3; e <= 16; e += 0.25) ns.push(Math.round(Math.pow(2, e)));
  const terms = [["convolution", layerText(`convolution, k = ${k}: k·n·d²`), (m) => k * m * d * d],
                 ["recurrent", layerText("recurrent: n·d²"), (m) => m * d * d],
                 ["self_attention", layerText("self-attention: n²·d"), (m) => m * m * d],
                 ["restricted_self_attention", layerText(`restricted, r = ${r}: r·n·d`), (m) => r * m * d]];
  const costChart = lineChart({
    name: "cost", logx: true, logy: true, xlabel: "n (sequence length)", ylabel: "multiply-adds (O() term)",
    width: 760, height: 340,
    series: terms.map(([key, name, f]) => ({name, x: ns, y: ns.map(f), color: LAYER_COLORS[key]})),
    describe: (si, i) => [terms[si][1], locf("n = {0}, d = {1}: {2} multiply-adds", ns[i], d, fmtCount(terms[si][2](ns[i])))]});
  costChart.setCursor(n);

  const parts = [
    section(locf("The chapter's comparison at n = {0}, d = {1}, k = {2}", n, d, k),
            "Per layer type: its computational complexity, the multiply-adds it means for these sizes, its " +
            "sequential operations and its maximum path length (as a formula, and measured through real layers).",
            table, cross),
    section("Cost against n", locf("The O() terms on log-log axes: a slope is an exponent of n. The dashed line is the " +
            "table's n = {0}. Hover a point for its numbers.", n), costChart.node)];

  const me = data.measure;
  if (me) {
    const series = me.layers.map((L) => ({
      name: `${L.layer.replace(/_/g, " ")}: slope ${L.slope.toFixed(2)} (theory ${L.theory})`,
      label: locf("{0}: slope {1} (theory {2})", layerText(L.layer.replace(/_/g, " ")), L.slope.toFixed(2), L.theory),
      x: me.n, y: L.seconds, color: LAYER_COLORS[L.layer]}));
    const measured = lineChart({
      name: "measured", logx: true, logy: true, points: true, width: 760, height: 340,
      xlabel: "n (sequence length)", ylabel: locf("time per layer ({0})", loc(me.clock)), series,
      describe: (si, i) => {
        const L = me.layers[si];
        return [layerText(L.layer.replace(/_/g, " ")), locf("n = {0}: {1} ({2} time)", me.n[i], fmtTime(L.seconds[i]), loc(me.clock)),
                locf("{0} multiply-adds", fmtCount(L.multiply_adds[i]))];
      }});
    const fits = el("table", {class: "data", "data-table": "fits"},
      el("tr", {}, ...["layer", locf("fitted exponent ({0})", loc(me.clock)), "of the multiply-adds", "theory"].map((h) => el("th", {text: loc(h)}))));
    for (const L of me.layers)
      fits.append(el("tr", {"data-layer": L.layer}, el("td", {text: layerText(L.layer.replace(/_/g, " "))}),
        el("td", {text: L.slope.toFixed(2)}), el("td", {text: L.count_slope.toFixed(2)}), el("td", {text: String(L.theory)})));
    parts.push(section("Measured", locf("Real layers timed for n = {0} with d = {1} (median of " +
                       "{2}); the exponent is fitted over n = {3} … {4}. Hover a point for n and the time.",
                       me.n.join(", "), me.d, me.reps, me.fit_n[0], me.fit_n[me.fit_n.length - 1]), measured.node, fits));
  } else {
    parts.push(section("Measured", "Run with --measure to time real layers over a sweep of n and fit their exponents."));
  }
  root.append(...parts);
  attnPage.state.kind = "complexity";
}
