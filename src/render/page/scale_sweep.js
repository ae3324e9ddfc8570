// scale_sweep.js — the page of `attn selfattn --scale-sweep`: why scores
// are divided by √d. For each d of the sweep, the softmax's mean largest
// weight over the keys (1: one-hot) and the variance of the scores, for
// q·k and q·k/√d: the two plots of --png, with hover on every point.
// Every number comes from the run's data.

function scaleSweepPage(root, data) {
  const d = data.dims, uniform = 1 / data.keys;
  const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(4));
  const weights = lineChart({
    name: "largest-weight", logx: true, points: true, width: 760, height: 320, ylim: [0, 1],
    xlabel: "d (the width of q and k)", ylabel: "mean largest weight",
    series: [{name: "q·k", x: d, y: data.max_weight_raw},
             {name: "q·k/√d", x: d, y: data.max_weight_scaled},
             {name: `uniform, 1/${data.keys}`, x: d, y: d.map(() => uniform), dash: [6, 4]}],
    describe: (si, i) => [si === 2 ? "uniform softmax" : si ? "q·k/√d" : "q·k",
                          `d = ${d[i]}: largest weight ${fmt(si === 2 ? uniform : si ? data.max_weight_scaled[i] : data.max_weight_raw[i])}`,
                          si === 2 ? "" : `entropy ${fmt(si ? data.entropy_scaled[i] : data.entropy_raw[i])} nats`]});
  const variance = lineChart({
    name: "variance", logx: true, logy: true, points: true, width: 760, height: 320,
    xlabel: "d (the width of q and k)", ylabel: "variance of the scores",
    series: [{name: "q·k", x: d, y: data.var_raw}, {name: "q·k/√d", x: d, y: data.var_scaled}],
    describe: (si, i) => [si ? "q·k/√d" : "q·k", `d = ${d[i]}: variance ${fmt(si ? data.var_scaled[i] : data.var_raw[i])}`]});
  const last = d.length - 1;
  root.append(
    section(`Softmax over ${data.keys} keys: its largest weight against d`,
            `${data.samples} pairs of q and k per d, components N(0, 1), seed ${data.seed}. Unscaled, the ` +
            `softmax nears one-hot as d grows (largest weight ${fmt(data.max_weight_raw[last])} at d = ${d[last]}); ` +
            `divided by √d it keeps one shape (${fmt(data.max_weight_scaled[last])}). Hover a point for its numbers.`,
            weights.node),
    section("Variance of the scores",
            "q·k adds d products of variance 1: its variance grows like d; q·k/√d stays near 1.", variance.node));
  attnPage.state.kind = "scale_sweep";
}
