// complexity.js — the page of `attn complexity`: the chapter's table for
// the run's n, d, k, the cost of each layer against n on log-log axes (the
// formulas), and with --measure the timed layers with their fitted growth
// exponents. Every number comes from the data; the page only lays it out.

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

function complexityPage(root, data) {
  const {n, d, k, r} = data;
  const table = el("table", {class: "data", "data-table": "layers"},
    el("tr", {}, ...["layer", "complexity", "multiply-adds", "sequential", "max path", "path formula", "measured path"]
      .map((h) => el("th", {text: loc(h)}))));
  for (const L of data.layers)
    table.append(el("tr", {"data-layer": L.layer},
      el("td", {text: L.name}), el("td", {text: L.complexity}), el("td", {text: fmtCount(L.multiply_adds)}),
      el("td", {text: `${L.sequential_operations} = ${L.sequential_operations_value}`}),
      el("td", {text: L.max_path_length}), el("td", {text: `${L.path_formula} = ${L.path_formula_value}`}),
      el("td", {text: `${L.path_measured} ${L.path_measured === 1 ? L.path_unit.replace(/s$/, "") : L.path_unit}`})));
  const cx = data.self_attention_costlier;
  const cross = el("p", {class: "note",
    text: `Self-attention costs more than a recurrent layer once ${cx.than_recurrent.rule} ` +
          `(n ≥ ${cx.than_recurrent.big_o_n} by the O() terms for d = ${d}), and more than a convolution once ` +
          `${cx.than_convolution.rule} (n ≥ ${cx.than_convolution.big_o_n}).`});

  // the O() terms against n: where the lines cross is where the cost turns
  const ns = [];
  for (let e = 3; e <= 16; e += 0.25) ns.push(Math.round(Math.pow(2, e)));
  const terms = [["convolution", `convolution, k = ${k}: k·n·d²`, (m) => k * m * d * d],
                 ["recurrent", "recurrent: n·d²", (m) => m * d * d],
                 ["self_attention", "self-attention: n²·d", (m) => m * m * d],
                 ["restricted_self_attention", `restricted, r = ${r}: r·n·d`, (m) => r * m * d]];
  const costChart = lineChart({
    name: "cost", logx: true, logy: true, xlabel: "n (sequence length)", ylabel: "multiply-adds (O() term)",
    width: 760, height: 340,
    series: terms.map(([key, name, f]) => ({name, x: ns, y: ns.map(f), color: LAYER_COLORS[key]})),
    describe: (si, i) => [terms[si][1], `n = ${ns[i]}, d = ${d}: ${fmtCount(terms[si][2](ns[i]))} multiply-adds`]});
  costChart.setCursor(n);

  const parts = [
    section(`The chapter's comparison at n = ${n}, d = ${d}, k = ${k}`,
            "Per layer type: its computational complexity, the multiply-adds it means for these sizes, its " +
            "sequential operations and its maximum path length (as a formula, and measured through real layers).",
            table, cross),
    section("Cost against n", "The O() terms on log-log axes: a slope is an exponent of n. The dashed line is the " +
            `table's n = ${n}. Hover a point for its numbers.`, costChart.node)];

  const me = data.measure;
  if (me) {
    const series = me.layers.map((L) => ({
      name: `${L.layer.replace(/_/g, " ")}: slope ${L.slope.toFixed(2)} (theory ${L.theory})`,
      x: me.n, y: L.seconds, color: LAYER_COLORS[L.layer]}));
    const measured = lineChart({
      name: "measured", logx: true, logy: true, points: true, width: 760, height: 340,
      xlabel: "n (sequence length)", ylabel: `time per layer (${me.clock})`, series,
      describe: (si, i) => {
        const L = me.layers[si];
        return [L.layer.replace(/_/g, " "), `n = ${me.n[i]}: ${fmtTime(L.seconds[i])} (${me.clock} time)`,
                `${fmtCount(L.multiply_adds[i])} multiply-adds`];
      }});
    const fits = el("table", {class: "data", "data-table": "fits"},
      el("tr", {}, ...["layer", `fitted exponent (${me.clock})`, "of the multiply-adds", "theory"].map((h) => el("th", {text: loc(h)}))));
    for (const L of me.layers)
      fits.append(el("tr", {"data-layer": L.layer}, el("td", {text: L.layer.replace(/_/g, " ")}),
        el("td", {text: L.slope.toFixed(2)}), el("td", {text: L.count_slope.toFixed(2)}), el("td", {text: String(L.theory)})));
    parts.push(section("Measured", `Real layers timed for n = ${me.n.join(", ")} with d = ${me.d} (median of ` +
                       `${me.reps}); the exponent is fitted over n = ${me.fit_n[0]} … ${me.fit_n[me.fit_n.length - 1]}. Hover a point for n and ` +
                       "the time.", measured.node, fits));
  } else {
    parts.push(section("Measured", "Run with --measure to time real layers over a sweep of n and fit their exponents."));
  }
  root.append(...parts);
  attnPage.state.kind = "complexity";
}
