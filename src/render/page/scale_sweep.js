// scale_sweep.js — the page of `attn selfattn --scale-sweep`: why scores
// are divided by √d. For each d of the sweep, the softmax's mean largest
// weight over the keys (1: one-hot) and the variance of the scores, for
// q·k and q·k/√d: the two plots of --png, with hover on every point.
// Every number comes from the run's data.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "uniform, 1/{0}": "均匀，1/{0}",
  "uniform softmax": "均匀的 softmax",
  "d = {0}: largest weight {1}": "d = {0}：最大权重 {1}",
  "entropy {0} nats": "熵 {0} 奈特",
  "d = {0}: variance {1}": "d = {0}：方差 {1}",
  "Softmax over {0} keys: its largest weight against d": "{0} 个键上的 softmax：最大权重随 d 的变化",
  "{0} pairs of q and k per d, components N(0, 1), seed {1}. Unscaled, the softmax nears one-hot as d grows (largest weight {2} at d = {3}); divided by √d it keeps one shape ({4}). Hover a point for its numbers.": "每个 d 取 {0} 对 q 和 k，分量服从 N(0, 1)，种子 {1}。不缩放时，随着 d 增大 softmax 趋近独热（d = {3} 时最大权重 {2}）；除以 √d 后形状不变（{4}）。悬停在点上看它的数。",
  "q·k adds d products of variance 1: its variance grows like d; q·k/√d stays near 1.": "q·k 是 d 个方差为 1 的乘积之和：方差随 d 增长；q·k/√d 保持在 1 附近。",
  "d (the width of q and k)": "d（q 和 k 的宽度）",
  "variance of the scores": "评分的方差",
  "largest-weight": "最大权重",
  "variance": "方差",
});

function scaleSweepPage(root, data) {
  const d = data.dims, uniform = 1 / data.keys;
  const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(4));
  const weights = lineChart({
    name: "largest-weight", logx: true, points: true, width: 760, height: 320, ylim: [0, 1],
    xlabel: "d (the width of q and k)", ylabel: "mean largest weight",
    series: [{name: "q·k", x: d, y: data.max_weight_raw},
             {name: "q·k/√d", x: d, y: data.max_weight_scaled},
             {name: `uniform, 1/${data.keys}`, label: locf("uniform, 1/{0}", data.keys), x: d, y: d.map(() => uniform), dash: [6, 4]}],
    describe: (si, i) => [si === 2 ? loc("uniform softmax") : si ? "q·k/√d" : "q·k",
                          locf("d = {0}: largest weight {1}", d[i], fmt(si === 2 ? uniform : si ? data.max_weight_scaled[i] : data.max_weight_raw[i])),
                          si === 2 ? "" : locf("entropy {0} nats", fmt(si ? data.entropy_scaled[i] : data.entropy_raw[i]))]});
  const variance = lineChart({
    name: "variance", logx: true, logy: true, points: true, width: 760, height: 320,
    xlabel: "d (the width of q and k)", ylabel: "variance of the scores",
    series: [{name: "q·k", x: d, y: data.var_raw}, {name: "q·k/√d", x: d, y: data.var_scaled}],
    describe: (si, i) => [si ? "q·k/√d" : "q·k", locf("d = {0}: variance {1}", d[i], fmt(si ? data.var_scaled[i] : data.var_raw[i]))]});
  const last = d.length - 1;
  root.append(
    section(locf("Softmax over {0} keys: its largest weight against d", data.keys),
            locf("{0} pairs of q and k per d, components N(0, 1), seed {1}. Unscaled, the " +
                 "softmax nears one-hot as d grows (largest weight {2} at d = {3}); " +
                 "divided by √d it keeps one shape ({4}). Hover a point for its numbers.",
                 data.samples, data.seed, fmt(data.max_weight_raw[last]), d[last], fmt(data.max_weight_scaled[last])),
            weights.node),
    section("Variance of the scores",
            "q·k adds d products of variance 1: its variance grows like d; q·k/√d stays near 1.", variance.node));
  attnPage.state.kind = "scale_sweep";
}
