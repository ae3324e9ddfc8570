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
    const spec = {rows: [{name, title: names[run.arch] + (run.label ? ` (${run.label})` : ""), query_tokens: pg.target, key_tokens: pg.source, valid_lens: null}],
                  heads: 1, Nq: Tq, Nk: Ts, weights: compareAlignment(run, run.steps.length - 1, Tq, Ts), causal: false,
                  cmap: cm, vmin: 0, vmax: 1, xlabel: "source words", ylabel: "target words (the reference)",
                  qname: "target word", kname: "source word", average: false, headName: () => "alignment"};
    if (framed) { spec.framed = framed; spec.framedNote = (q) => `framed: “${pg.target[q]}” translates this source word`; }
    const grid = attentionGrid(spec);
    // the run's kept step at or before step s (the strides may differ)
    const at = (s) => { let i = 0; while (i + 1 < run.steps.length && run.steps[i + 1] <= s) i++; return i; };
    return {run, grid, show: (s) => grid.update(compareAlignment(run, at(s), Tq, Ts)),
            node: el("div", {class: "xview", "data-view": name}, grid.node)};
  });
  const info = (s) => data.runs.map((r) => {
    const h = r.history.find((e) => e.step === s);
    return `${r.label || r.arch}: ` + (h ? `BLEU ${h.heldout_bleu === null ? "—" : h.heldout_bleu.toFixed(3)}` +
                                (h.alignment === null ? "" : `, alignment ${h.alignment.toFixed(3)}`) : "before training");
  }).join(" · ");
  const bar = el("div", {class: "stepbar"});
  const player = stepPlayer(S, (i) => {
    for (const v of views) v.show(steps[i]);
    player.info.textContent = `step ${steps[i]} of ${steps[S - 1]} · ` + info(steps[i]);
    attnPage.state.step = {index: i, step: steps[i]};
  });
  bar.append(player.node);
  const rowsOf = [["held-out BLEU", (f) => (f.bleu === null ? "—" : f.bleu.toFixed(3))],
                  ["exact", (f) => (f.exact === null ? "—" : pct(f.exact))],
                  ["alignment", (f) => (f.alignment === null ? "—" : f.alignment.toFixed(3))],
                  [`BLEU ≥ ${data.bleu_threshold} at step (s)`,
                   (f) => (f.bleu_095_step === null ? "not reached" : `${f.bleu_095_step} (${f.bleu_095_seconds.toFixed(1)})`)],
                  ["ms per step", (f) => f.ms_per_step.toFixed(2)],
                  ["sequential steps, training", (f) => String(f.sequential_steps_training)],
                  ["sequential steps, greedy", (f) => String(f.sequential_steps_greedy)],
                  ["layers a greedy step", (f) => String(f.layers_per_greedy_step)]];
  // --compare-rnn, --compare-score: the same model twice, the same sequential steps
  const twice = data.compare_rnn || data.compare_score;
  if (twice) rowsOf.splice(5);
  const table = el("table", {class: "data", "data-table": "compare"},
    el("tr", {}, el("th", {text: ""}), ...data.runs.map((r) => el("th", {text: r.label || r.arch}))),
    ...rowsOf.map(([name, f]) => el("tr", {}, el("th", {text: loc(name)}), ...data.runs.map((r) => el("td", {text: f(r.final)})))));
  root.append(bar,
    section(`${data.compare_rnn ? "Bahdanau's model, GRU against LSTM" : data.compare_score
               ? "Bahdanau's model, the additive score against the dot product" : "Transformer against Bahdanau"}: ` +
            `${data.steps} steps each, seed ${data.seed}`,
            twice
              ? "The same pairs, seed, steps, batch and learning rate; Bahdanau's model twice, " +
                (data.compare_rnn ? "with GRUs and with LSTMs (the query the last layer's h). "
                                  : "with the additive score and with the scaled dot product q·k/√d. ") +
                "Seconds: training only."
              : "The same pairs, seed, steps, batch and learning rate; each model with its own defaults. Seconds: " +
                "training only. Training needs 2·L sequential layer applications a pair from the Transformer, " +
                "2·T GRU steps from Bahdanau's model; greedy translation writes one word a step with both.", table),
    section("The probe's alignment at the slider's step",
            `Held-out sentence: “${pg.target.join(" ")}” from “${pg.source.join(" ")}”, teacher-forced on the reference. ` +
            "One scale 0 … 1; the frame marks the source word each target word translates.",
            el("div", {class: "row"}, ...views.map((v) => v.node))));
  player.show(S - 1);
  attnPage.state.kind = "compare_arch";
  attnPage.compare = {show: player.show, views};
}
