// compare_arch.js — the page of `attn train --compare-arch`: the probe
// sentence's alignment as each model learns it, the Transformer's last
// block (heads averaged) beside Bahdanau's one attention, on one step
// slider; and the table of both runs' figures. --compare-rnn and
// --compare-score draw the same page for Bahdanau's model twice, each run
// named by its label (gru, lstm; additive, dot).
//
// data = {runs: [{arch, history, final}, …]}; pg = {source, target, cmap,
//   runs: [{arch, layers, heads, steps, step_translations, cross (S, L,
//   NH, Tq, Ts), align}]}

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "Transformer: the last block's cross-attention, heads averaged": "Transformer：最后一块的交叉注意力，各头平均",
  "Bahdanau: the attention, its query the decoder's previous state s(t′−1)": "Bahdanau：该注意力，查询是解码器的上一个状态 s(t′−1)",
  "BLEU ≥ {0} at step (s)": "BLEU ≥ {0} 的步（秒）",
  "not reached": "未达到",
  "sequential steps, training": "顺序步数，训练",
  "sequential steps, greedy": "顺序步数，贪心",
  "layers a greedy step": "每个贪心步的层数",
  "Bahdanau's model, GRU against LSTM": "Bahdanau 的模型，GRU 对比 LSTM",
  "Bahdanau's model, the additive score against the dot product": "Bahdanau 的模型，加性评分对比点积",
  "Transformer against Bahdanau": "Transformer 对比 Bahdanau",
  ": {0} steps each, seed {1}": "：各 {0} 步，种子 {1}",
  "The same pairs, seed, steps, batch and learning rate; Bahdanau's model twice, ": "相同的句对、种子、步数、批量和学习率；Bahdanau 的模型两次，",
  "with GRUs and with LSTMs (the query the last layer's h). ": "分别用 GRU 和 LSTM（查询是最后一层的 h）。",
  "with the additive score and with the scaled dot product q·k/√d. ": "分别用加性评分和缩放点积 q·k/√d。",
  "Seconds: training only.": "秒数：仅训练。",
  "The same pairs, seed, steps, batch and learning rate; each model with its own defaults. Seconds: training only. Training needs 2·L sequential layer applications a pair from the Transformer, 2·T GRU steps from Bahdanau's model; greedy translation writes one word a step with both.": "相同的句对、种子、步数、批量和学习率；每个模型用自己的默认值。秒数：仅训练。训练时 Transformer 每个句对需要 2·L 次顺序的层计算，Bahdanau 的模型需要 2·T 个 GRU 步；两者的贪心翻译都是每步写一个词。",
  "Held-out sentence: “{0}” from “{1}”, teacher-forced on the reference. One scale 0 … 1; the frame marks the source word each target word translates.": "留出句：“{0}”，译自“{1}”，以参考译文强制教学。同一色标 0 … 1；框标出每个目标词所译自的源词。",
  "source words": "源词",
  "target words (the reference)": "目标词（参考译文）",
  "transformer": "Transformer",
});

// Run k's (Tq, Ts) alignment at its kept step i: the last block, heads averaged.
function compareAlignment(run, i, Tq, Ts) {
  const A = tensor(run.cross).data, L = run.layers, NH = run.heads, n = Tq * Ts;
  const out = new Float32Array(n), base = (i * L + (L - 1)) * NH * n;
  for (let h = 0; h < NH; h++) for (let j = 0; j < n; j++) out[j] += A[base + h * n + j] / NH;
  return out;
}

function compareArchPage(root, data, pg) {
  const Tq = pg.target.length, Ts = pg.source.length, cm = colormap(pg.cmap);
  const steps = pg.runs[0].steps, S = steps.length;
  const names = {transformer: "Transformer: the last block's cross-attention, heads averaged",
                 bahdanau: "Bahdanau: the attention, its query the decoder's previous state s(t′−1)"};
  const framed = pg.runs[0].align ? (q, k) => pg.runs[0].align[q] === k : null;
  const views = pg.runs.map((run) => {
    const name = run.label || run.arch;
    const spec = {rows: [{name, title: loc(names[run.arch]) + (run.label ? ` (${loc(run.label)})` : ""), query_tokens: pg.target, key_tokens: pg.source, valid_lens: null}],
                  heads: 1, Nq: Tq, Nk: Ts, weights: compareAlignment(run, run.steps.length - 1, Tq, Ts), causal: false,
                  cmap: cm, vmin: 0, vmax: 1, xlabel: "source words", ylabel: "target words (the reference)",
                  qname: "target word", kname: "source word", average: false, headName: () => "alignment"};
    if (framed) { spec.framed = framed; spec.framedNote = (q) => locf("framed: “{0}” translates this source word", pg.target[q]); }
    const grid = attentionGrid(spec);
    // the run's kept step at or before step s (the strides may differ)
    const at = (s) => { let i = 0; while (i + 1 < run.steps.length && run.steps[i + 1] <= s) i++; return i; };
    return {run, grid, show: (s) => grid.update(compareAlignment(run, at(s), Tq, Ts)),
            node: el("div", {class: "xview", "data-view": name}, grid.node)};
  });
  const info = (s) => data.runs.map((r) => {
    const h = r.history.find((e) => e.step === s);
    return `${loc(r.label || r.arch)}: ` + (h ? `BLEU ${h.heldout_bleu === null ? "—" : h.heldout_bleu.toFixed(3)}` +
                                (h.alignment === null ? "" : locf(", alignment {0}", h.alignment.toFixed(3))) : loc("before training"));
  }).join(" · ");
  const bar = el("div", {class: "stepbar"});
  const player = stepPlayer(S, (i) => {
    for (const v of views) v.show(steps[i]);
    player.info.textContent = locf("step {0} of {1}", steps[i], steps[S - 1]) + " · " + info(steps[i]);
    attnPage.state.step = {index: i, step: steps[i]};
  });
  bar.append(player.node);
  const rowsOf = [["held-out BLEU", (f) => (f.bleu === null ? "—" : f.bleu.toFixed(3))],
                  ["exact", (f) => (f.exact === null ? "—" : pct(f.exact))],
                  ["alignment", (f) => (f.alignment === null ? "—" : f.alignment.toFixed(3))],
                  [locf("BLEU ≥ {0} at step (s)", data.bleu_threshold),
                   (f) => (f.bleu_095_step === null ? loc("not reached") : `${f.bleu_095_step} (${f.bleu_095_seconds.toFixed(1)})`)],
                  ["ms per step", (f) => f.ms_per_step.toFixed(2)],
                  ["sequential steps, training", (f) => String(f.sequential_steps_training)],
                  ["sequential steps, greedy", (f) => String(f.sequential_steps_greedy)],
                  ["layers a greedy step", (f) => String(f.layers_per_greedy_step)]];
  // --compare-rnn, --compare-score: the same model twice, the same sequential steps
  const twice = data.compare_rnn || data.compare_score;
  if (twice) rowsOf.splice(5);
  const table = el("table", {class: "data", "data-table": "compare"},
    el("tr", {}, el("th", {text: ""}), ...data.runs.map((r) => el("th", {text: loc(r.label || r.arch)}))),
    ...rowsOf.map(([name, f]) => el("tr", {}, el("th", {text: loc(name)}), ...data.runs.map((r) => el("td", {text: f(r.final)})))));
  root.append(bar,
    section(loc(data.compare_rnn ? "Bahdanau's model, GRU against LSTM" : data.compare_score
               ? "Bahdanau's model, the additive score against the dot product" : "Transformer against Bahdanau") +
            locf(": {0} steps each, seed {1}", data.steps, data.seed),
            twice
              ? loc("The same pairs, seed, steps, batch and learning rate; Bahdanau's model twice, ") +
                loc(data.compare_rnn ? "with GRUs and with LSTMs (the query the last layer's h). "
                                     : "with the additive score and with the scaled dot product q·k/√d. ") +
                loc("Seconds: training only.")
              : "The same pairs, seed, steps, batch and learning rate; each model with its own defaults. Seconds: " +
                "training only. Training needs 2·L sequential layer applications a pair from the Transformer, " +
                "2·T GRU steps from Bahdanau's model; greedy translation writes one word a step with both.", table),
    section("The probe's alignment at the slider's step",
            locf("Held-out sentence: “{0}” from “{1}”, teacher-forced on the reference. " +
                 "One scale 0 … 1; the frame marks the source word each target word translates.", pg.target.join(" "), pg.source.join(" ")),
            el("div", {class: "row"}, ...views.map((v) => v.node))));
  player.show(S - 1);
  attnPage.state.kind = "compare_arch";
  attnPage.compare = {show: player.show, views};
}
