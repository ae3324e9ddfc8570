// train.js — the page of `attn train`: a step slider and a play button
// over every logged step; the probe's heads (rows = layers; for apple
// 苹果's row in each sentence) and a cursor on the loss and accuracy curves
// move together; ← → step, Home and End jump. With --compare-posenc both
// runs move on the one slider.

// The grid rows of a run: its probes × layers, named for data-panel.
function trainRows(run, prefix) {
  const rows = [];
  run.probes.forEach((pr) => {
    for (let l = 0; l < run.layers; l++) {
      const who = [prefix, pr.name].filter(Boolean).join(" ");
      const row = {name: `${who ? who + " " : ""}layer ${l + 1}`, query_tokens: pr.tokens, key_tokens: pr.tokens,
                   valid_lens: null};
      if (pr.name) {
        row.query = pr.at;
        row.title = `${pr.name}: ${pr.tokens[pr.at]}'s row (query ${pr.at})` + (run.layers > 1 ? `, layer ${l + 1}` : "");
      } else {
        row.title = run.layers > 1 ? `layer ${l + 1}` : `the probe ${pr.tokens.join(" ")}`;
      }
      rows.push(row);
    }
  });
  return rows;
}

// A step slider and a play button over the steps 0 … n − 1 of a run:
// draw(i) draws step i (its views, the curves' cursor, info's text). ← →
// Home and End on the page move it too, but not in the tour, whose views
// share the page. Returns {node, slider, play, info, show(i), stop()}.
function stepPlayer(n, draw) {
  const slider = el("input", {type: "range", min: "0", max: String(n - 1), value: "0", step: "1",
                              "aria-label": "training step"});
  const play = el("button", {class: "btn", type: "button", "aria-label": "play", text: "▶ play"});
  const info = el("span", {class: "stepinfo", "aria-live": "polite"});
  const pl = {slider, play, info, node: el("div", {class: "controls"}, play, slider, info)};
  let timer = null;
  pl.show = (i) => {
    i = Math.max(0, Math.min(n - 1, i));
    slider.value = String(i);
    draw(i);
  };
  pl.stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = "▶ play";
    play.setAttribute("aria-label", "play");
    attnPage.state.playing = false;
  };
  play.addEventListener("click", () => {
    if (timer) return pl.stop();
    if (Number(slider.value) === n - 1) pl.show(0);
    play.textContent = "❚❚ pause";
    play.setAttribute("aria-label", "pause");
    attnPage.state.playing = true;
    timer = setInterval(() => {
      const i = Number(slider.value) + 1;
      pl.show(i);
      if (i >= n - 1) pl.stop();
    }, Math.max(60, Math.min(400, 6000 / n)));
  });
  slider.addEventListener("input", () => { pl.stop(); pl.show(Number(slider.value)); });
  // the page's keys, until a redraw (live.js) has replaced this slider
  if (!attnPage.embedded) document.addEventListener("keydown", function keys(e) {
    if (!slider.isConnected) { document.removeEventListener("keydown", keys); return; }
    const t = e.target;
    if (t !== document.body && t !== slider && t.tagName !== "BUTTON") return; // a panel or a field has the keys
    const i = Number(slider.value);
    const to = {ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: n - 1}[e.key];
    if (to === undefined) return;
    e.preventDefault();
    pl.stop();
    pl.show(to);
  });
  return pl;
}

function pct(v) {
  return v === null || v === undefined ? "—" : (100 * v).toFixed(1) + "%";
}

function trainPage(root, data, pg) {
  const docs = data.runs ? data.runs : [data]; // --compare-posenc, --compare-layers: two
  const runs = pg.runs;
  const steps = runs[0].steps;            // the slider's steps (the runs log the same ones)
  const cm = colormap(pg.cmap);
  const views = runs.map((run, i) => {
    const att = tensor(run.attention);
    const per = att.data.length / Math.max(1, steps.length); // one step's numbers
    const spec = {rows: trainRows(run, runs.length > 1 ? run.label : null), heads: run.heads, Nq: run.length,
                  Nk: run.length, weights: att.data.subarray(0, per), causal: run.causal, cmap: cm,
                  vmin: 0, vmax: 1, xlabel: "keys", ylabel: "queries"};
    const grid = attentionGrid(spec);
    return {run, doc: docs[i], att: att.data, per, spec, grid};
  });
  // the head view follows the first run
  const hv = headView(views[0].spec, () => views[0].grid.weights);
  views[0].grid.headView = hv;

  // the curves, one line per run and measure, the cursor at the step
  const hist = (doc, key) => ({x: doc.history.map((h) => h.step), y: doc.history.map((h) => h[key] === null ? NaN : h[key])});
  const tag = (v) => (runs.length > 1 ? ` (${v.run.label})` : "");
  const lossChart = lineChart({name: "loss", xlabel: "step", ylabel: "loss", width: 560, height: 260,
    series: views.map((v, i) => ({name: "training loss (the batch's)" + tag(v), ...hist(v.doc, "loss"),
                                  color: PALETTE[i], dash: i ? [6, 4] : []})),
    describe: (si, i) => [`step ${views[si].doc.history[i].step}${tag(views[si])}`,
                          `loss ${views[si].doc.history[i].loss.toFixed(4)}`]});
  const accSeries = [];
  views.forEach((v, i) => {
    accSeries.push({name: "training accuracy" + tag(v), ...hist(v.doc, "train_accuracy"), color: PALETTE[2 + 2 * i], dash: i ? [6, 4] : []});
    if (v.doc.history.some((h) => h.heldout_accuracy !== null))
      accSeries.push({name: "held-out accuracy" + tag(v), ...hist(v.doc, "heldout_accuracy"), color: PALETTE[3 + 2 * i], dash: i ? [6, 4] : []});
  });
  const accChart = lineChart({name: "accuracy", xlabel: "step", ylabel: "accuracy", width: 560, height: 260,
    ylim: [0, 1], series: accSeries,
    describe: (si, i) => [accSeries[si].name, `step ${accSeries[si].x[i]}: ${pct(accSeries[si].y[i])}`]});

  // the slider and its companions
  const player = stepPlayer(steps.length, (i) => {
    const s = steps[i];
    for (const v of views) v.grid.update(v.att.subarray(i * v.per, (i + 1) * v.per));
    lossChart.setCursor(s);
    accChart.setCursor(s);
    const parts = views.map((v) => {
      const h = v.doc.history.find((e) => e.step === s);
      const label = runs.length > 1 ? `${v.run.label}: ` : "";
      return h ? `${label}loss ${h.loss.toFixed(4)} · accuracy ${pct(h.train_accuracy)}` +
                 (h.heldout_accuracy !== null ? ` · held-out ${pct(h.heldout_accuracy)}` : "")
               : `${label}before training`;
    });
    player.info.textContent = `step ${s} of ${steps[steps.length - 1]} · ${parts.join("  |  ")}`;
    attnPage.state.step = {index: i, step: s};
  });

  const fin = docs.map((d, i) => `${runs.length > 1 ? runs[i].label + ": " : ""}final loss ${d.final.loss.toFixed(4)}, ` +
                       `training accuracy ${pct(d.final.train_accuracy)}` +
                       (d.final.heldout_accuracy !== null ? `, held-out ${pct(d.final.heldout_accuracy)}` : ""));
  const stride = runs[0].stride > 1 ? ` (every ${runs[0].stride}th logged step kept for the heatmaps)` : "";
  root.append(
    section(`Training: ${docs[0].task}, ${docs[0].steps} steps`, fin.join("; ") + ".",
            player.node,
            el("p", {class: "note", text: `${steps.length} logged steps${stride}; the heatmaps, the head view and ` +
                                          "the curves' cursor show the slider's step."}),
            el("div", {class: "row"}, lossChart.node, accChart.node),
            keysNote([["← →", "the previous or next logged step"], ["Home / End", "the first or last step"],
                      ["▶ play", "run through the steps"], ["hover", "a cell's weight, a point's numbers"]])),
    ...views.map((v) => section(runs.length > 1 ? `Attention, ${v.run.label}` : "Attention of the probe",
      v.run.probes.some((p) => p.name) ? "The row of the word the label is read from, in each sentence, on one scale 0 … 1."
                                       : "Rows are queries, columns keys, one scale 0 … 1 for every step. Hover a cell for its weight.",
      v.grid.node)),
    section("Head view", "The probe at the slider's step: a line's opacity is the weight, one colour per head; " +
            "click a colour to hide its head, hover a token for its lines.", hv.node));
  player.show(steps.length - 1); // what was learnt; play runs it from the start
  attnPage.state.kind = "train";
  attnPage.train = {show: player.show, views};
}
