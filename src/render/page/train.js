// train.js — the page of `attn train`: a step slider and a play button
// over every logged step; the probe's heads (rows = layers; for apple
// 苹果's row in each sentence) and a cursor on the loss and accuracy curves
// move together; ← → step, Home and End jump. With --compare-posenc both
// runs move on the one slider.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "{0}: {1}'s row (query {2})": "{0}：{1} 的行（查询 {2}）",
  ", layer {0}": "，第 {0} 层",
  "the probe {0}": "探针 {0}",
  "❚❚ pause": "❚❚ 暂停",
  "pause": "暂停",
  " and ": " 和 ",
  "learned P": "学习的 P",
  "with P": "加上 P",
  "{0} layer, ": "{0} 层，",
  "{0} layers, ": "{0} 层，",
  "{0} head": "{0} 个头",
  "{0} heads": "{0} 个头",
  ", causal": "，因果",
  "final loss {0}, training accuracy {1}": "最终损失 {0}，训练准确率 {1}",
  ", held-out {0}": "，留出集 {0}",
  "final loss {0}": "最终损失 {0}",
  "; ": "；",
  " · loss {0}": " · 损失 {0}",
  " · {0}, run {1} of {2}": " · {0}，第 {1} 次运行（共 {2} 次）",
  "Training stopped at step {0} of {1}": "训练停在第 {0} 步（共 {1} 步）",
  "{0}: the steps so far are kept; change a control to train again.": "{0}：已有的步保留；改动一个控件即可重新训练。",
  "estimating the time left…": "估计剩余时间…",
  "about {0} s left (from the time per step so far)": "约剩 {0} 秒（按目前每步的时间）",
  "Training: step {0} of {1}": "训练：第 {0} 步（共 {1} 步）",
  "training accuracy": "训练准确率",
  "held-out accuracy": "留出集准确率",
  "a cell's weight": "单元格的权重",
  " and its path at the slider's step": "及其在滑块所在步的计算路径",
  ", a point's numbers": "，点的数值",
  "Attention, {0}": "注意力，{0}",
  "Attention of the probe": "探针的注意力",
  "The row of the word the label is read from, in each sentence, on one scale 0 … 1.": "每个句子中读出标签的那个词的行，同一色标 0 … 1。",
  "Rows are queries, columns keys, one scale 0 … 1 for every step. Hover a cell for its weight": "行是查询，列是键，每一步同一色标 0 … 1。悬停在单元格上看权重",
  " and, beside the panels, its path at the slider's step.": "，面板旁是它在滑块所在步的计算路径。",
  " (every {0}th logged step kept for the heatmaps)": "（热图保留每第 {0} 个记录的步）",
  "{0} logged steps{1}; the heatmaps, the head view and the curves' cursor show the slider's step.": "{0} 个记录的步{1}；热图、头视图和曲线上的光标显示滑块所在的步。",
  "loss {0} · accuracy {1}": "损失 {0} · 准确率 {1}",
  " · held-out {0}": " · 留出集 {0}",
  "before training": "训练前",
  "step {0} of {1}": "第 {0} 步（共 {1} 步）",
  "accuracy": "准确率",
  "The probe at the slider's step: a line's opacity is the weight, one colour per head; click a colour to hide its head, hover a token for its lines.": "滑块所在步的探针：线的不透明度就是权重，每个头一种颜色；点击颜色隐藏该头，悬停在词元上看它的线。",
  "No path kept for step {0}: --explain keeps every {1}th logged step (and the last) on a run this long.": "第 {0} 步没有保留路径：运行这么长时，--explain 每 {1} 个记录的步保留一个（以及最后一步）。",
  " at step {0}": "（第 {0} 步）",
  "layer {0}'s {1}": "第 {0} 层的{1}",
  "The paths are computed once the training has stopped.": "训练停止后才计算路径。",
  "computing the paths: training again in the module (attn {0} --explain)…": "计算路径中：在模块中重新训练（attn {0} --explain）…",
  "framed: “{0}” translates this source word": "加框：“{0}” 译自这个源词",
  ", alignment {0}": "，对齐 {0}",
  "bahdanau": "Bahdanau",
  " ({0})": "（{0}）",
  "no mask": "无掩蔽",
  "Samples": "生成的文本",
  "{0}: {1} characters after “{2}”, temperature {3}, seed {4}": "{0}：在“{2}”之后生成的 {1} 个字符，温度 {3}，种子 {4}",
  "Without the mask each position sees the next character and learns to copy it; at generation time the future is not there, so the no-mask model cannot generate.": "没有掩蔽时，每个位置都看得见下一个字符，于是学会了照抄它；生成时未来并不存在，所以无掩蔽的模型无法生成文本。",
  "No controls on this page: the text it was trained on ({0}) is a file the page does not hold. Run the command again to train on other settings.": "本页没有控件：训练所用的文本（{0}）是本页未携带的文件。要换一组设置训练，请再次运行命令。",
});

// The grid rows of a run: its probes × layers, named for data-panel.
function trainRows(run, prefix) {
  const rows = [];
  run.probes.forEach((pr) => {
    for (let l = 0; l < run.layers; l++) {
      const who = [prefix, pr.name].filter(Boolean).join(" ");
      const row = {name: `${who ? who + " " : ""}layer ${l + 1}`, label: `${who ? loc(who) + " " : ""}${locf("layer {0}", l + 1)}`,
                   query_tokens: pr.tokens, key_tokens: pr.tokens,
                   valid_lens: null};
      if (pr.name) {
        row.query = pr.at;
        row.title = locf("{0}: {1}'s row (query {2})", loc(pr.name), pr.tokens[pr.at], pr.at) +
                    (run.layers > 1 ? locf(", layer {0}", l + 1) : "");
      } else {
        row.title = run.layers > 1 ? locf("layer {0}", l + 1) : locf("the probe {0}", pr.tokens.join(" "));
      }
      rows.push(row);
    }
  });
  return rows;
}

// A step slider and a play button over the steps 0 … n − 1 of a run:
// draw(i) draws step i (its views, the curves' cursor, info's text). ← →
// Home and End on the page move it too, but not in the tour, whose views
// share the page. Returns {node, slider, play, info, show(i), stop(),
// setCount(n) (a run that grows: the slider's new end), moved (whether
// the learner has moved it)}.
function stepPlayer(n, draw) {
  const slider = el("input", {type: "range", min: "0", max: String(n - 1), value: "0", step: "1",
                              "aria-label": loc("training step")});
  const play = el("button", {class: "btn", type: "button", "aria-label": loc("play"), text: loc("▶ play")});
  const info = el("span", {class: "stepinfo", "aria-live": "polite"});
  const pl = {slider, play, info, node: el("div", {class: "controls"}, play, slider, info), moved: false};
  let timer = null;
  pl.show = (i) => {
    i = Math.max(0, Math.min(n - 1, i));
    slider.value = String(i);
    draw(i);
  };
  pl.setCount = (count) => {
    n = count;
    slider.max = String(n - 1);
  };
  pl.stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = loc("▶ play");
    play.setAttribute("aria-label", loc("play"));
    attnPage.state.playing = false;
  };
  play.addEventListener("click", () => {
    pl.moved = true;
    if (timer) return pl.stop();
    if (Number(slider.value) === n - 1) pl.show(0);
    play.textContent = loc("❚❚ pause");
    play.setAttribute("aria-label", loc("pause"));
    attnPage.state.playing = true;
    timer = setInterval(() => {
      const i = Number(slider.value) + 1;
      pl.show(i);
      if (i >= n - 1) pl.stop();
    }, Math.max(60, Math.min(400, 6000 / n)));
  });
  slider.addEventListener("input", () => { pl.moved = true; pl.stop(); pl.show(Number(slider.value)); });
  // the page's keys, until a redraw (live.js) has replaced this slider
  if (!attnPage.embedded) document.addEventListener("keydown", function keys(e) {
    if (!slider.isConnected) { document.removeEventListener("keydown", keys); return; }
    const t = e.target;
    if (t !== document.body && t !== slider && t.tagName !== "BUTTON") return; // a panel or a field has the keys
    const i = Number(slider.value);
    const to = {ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: n - 1}[e.key];
    if (to === undefined) return;
    e.preventDefault();
    pl.moved = true;
    pl.stop();
    pl.show(to);
  });
  return pl;
}

function pct(v) {
  return v === null || v === undefined ? "—" : (100 * v).toFixed(1) + "%";
}

// What was trained, from the page's command: the task, the position
// embedding (or the runs compared), the model's size.
function trainWhat(docs, runs, pg) {
  const words = pg.command ? shellWords(pg.command) : [];
  const at = words.indexOf("--pos-embedding"), pos = at > 0 ? words[at + 1] : null;
  const P = runs.length > 1 ? runs.map((r) => loc(r.label)).join(loc(" and "))
          : loc(pos === "none" || words.includes("--no-posenc") ? "without P"
                : pos === "learned" ? "learned P" : "with P");
  const L = runs[runs.length - 1].layers, H = runs[0].heads;
  const arch = (runs.length > 1 && words.includes("--compare-layers") ? "" : locf(L === 1 ? "{0} layer, " : "{0} layers, ", L)) +
               locf(H === 1 ? "{0} head" : "{0} heads", H) + (runs.every((r) => r.causal) ? loc(", causal") : "");
  return [docs[0].task, P, arch];
}

// The training section's heading and note: while streaming (data.stream)
// the step reached, its loss and the time left; stopped, where; else what
// was trained and its final loss.
function trainHeading(data, docs, runs, pg) {
  const what = trainWhat(docs, runs, pg), st = data.stream;
  if (!st) {
    const fin = docs.map((d, i) => `${runs.length > 1 ? loc(runs[i].label) + ": " : ""}` +
                         locf("final loss {0}, training accuracy {1}", d.final.loss.toFixed(4), pct(d.final.train_accuracy)) +
                         (d.final.heldout_accuracy != null ? locf(", held-out {0}", pct(d.final.heldout_accuracy)) : ""));
    const loss = runs.length === 1 ? [locf("final loss {0}", docs[0].final.loss.toFixed(4))] : [];
    return [locf("Training: {0}", [...what, locf("{0} steps", docs[0].steps), ...loss].join(" · ")), fin.join(loc("; ")) + loc(".")];
  }
  const loss = st.loss === null ? "" : locf(" · loss {0}", st.loss.toFixed(4));
  const who = st.nruns > 1 ? locf(" · {0}, run {1} of {2}", loc(st.label), st.run + 1, st.nruns) : "";
  if (st.state === "stopped")
    return [locf("Training stopped at step {0} of {1}", st.step, st.of) + loss + who,
            locf("{0}: the steps so far are kept; change a control to train again.", what.join(" · "))];
  const left = st.left === null ? loc("estimating the time left…")
             : locf("about {0} s left (from the time per step so far)", st.left < 10 ? st.left.toFixed(1) : Math.round(st.left));
  return [locf("Training: step {0} of {1}", st.step, st.of) + loss + who, `${what.join(" · ")} · ${left}`];
}

// The loss and accuracy curves, one line per run and measure; while
// streaming the x axis is the whole run's.
function trainCharts(views, runs, xlim) {
  const hist = (doc, key) => ({x: doc.history.map((h) => h.step), y: doc.history.map((h) => h[key] === null ? NaN : h[key])});
  // a run's name after a series' (the series' key in English, as shown in the page's language)
  const tag = (v) => (runs.length > 1 ? ` (${v.run.label})` : "");
  const shownTag = (v) => (runs.length > 1 ? locf(" ({0})", loc(v.run.label)) : "");
  const loss = lineChart({name: "loss", xlabel: "step", ylabel: "loss", width: 560, height: 260, xlim,
    series: views.map((v, i) => ({name: "training loss (the batch's)" + tag(v), label: loc("training loss (the batch's)") + shownTag(v),
                                  ...hist(v.doc, "loss"),
                                  color: PALETTE[i], dash: i ? [6, 4] : []})),
    describe: (si, i) => [locf("step {0}", views[si].doc.history[i].step) + shownTag(views[si]),
                          locf("loss {0}", views[si].doc.history[i].loss.toFixed(4))]});
  const accSeries = [];
  views.forEach((v, i) => {
    accSeries.push({name: "training accuracy" + tag(v), label: loc("training accuracy") + shownTag(v),
                    ...hist(v.doc, "train_accuracy"), color: PALETTE[2 + 2 * i], dash: i ? [6, 4] : []});
    if (v.doc.history.some((h) => h.heldout_accuracy != null)) // a language model's has none
      accSeries.push({name: "held-out accuracy" + tag(v), label: loc("held-out accuracy") + shownTag(v),
                      ...hist(v.doc, "heldout_accuracy"), color: PALETTE[3 + 2 * i], dash: i ? [6, 4] : []});
  });
  const acc = lineChart({name: "accuracy", xlabel: "step", ylabel: "accuracy", width: 560, height: 260,
    ylim: [0, 1], xlim, series: accSeries,
    describe: (si, i) => [accSeries[si].label, locf("step {0}: {1}", accSeries[si].x[i], pct(accSeries[si].y[i]))]});
  return {loss, acc, node: el("div", {class: "row"}, loss.node, acc.node)};
}

// Each run of data: its page run, --json document, attention (steps ×
// per numbers) and per
function trainRuns(data, pg) {
  const docs = data.runs ? data.runs : [data]; // --compare-posenc, --compare-layers: two
  return pg.runs.map((run, i) => {
    const att = run.attention.data instanceof Float32Array ? run.attention : tensor(run.attention);
    return {run, doc: docs[i], att: att.data, per: att.data.length / Math.max(1, run.steps.length)};
  });
}

// The views of data's runs: each run's attention grid at step 0, and a
// weight's path at the cursor's step (train_path.js) where the page has one
function trainViews(data, pg, cursor) {
  const runs = pg.runs, cm = colormap(pg.cmap), argv = trainPathArgv(pg);
  return trainRuns(data, pg).map((v) => {
    const run = v.run;
    const spec = {rows: trainRows(run, runs.length > 1 ? run.label : null), heads: run.heads, Nq: run.length,
                  Nk: run.length, weights: v.att.subarray(0, v.per), causal: run.causal, cmap: cm,
                  vmin: 0, vmax: 1, xlabel: "keys", ylabel: "queries"};
    if (argv) spec.path = trainPath(argv, data, run, cursor);
    return {...v, spec, grid: attentionGrid(spec)};
  });
}

// The page of a training: whole, or the steps so far of one that streams
// (data.stream, stream.js). root.attnTrain: {show(i), moved(), grow(data)
// (more steps of the same runs), replace(data) (another page in root)}.
function trainPage(root, data, pg) {
  root.dataset.trainView = "1"; // found by stream.js
  let docs = data.runs ? data.runs : [data], runs = pg.runs, st = data.stream;
  const cursor = trainCursor();
  cursor.running = Boolean(st && st.state === "running");
  const views = trainViews(data, pg, cursor);
  views.cursor = cursor;
  const count = () => Math.min(...runs.map((r) => r.steps.length)); // the runs log the same steps
  let steps = runs[0].steps.slice(0, count());
  // the head view follows the first run
  const hv = headView(views[0].spec, () => views[0].grid.weights);
  views[0].grid.headView = hv;
  let charts = trainCharts(views, runs, st ? [0, st.of] : undefined);
  const player = stepPlayer(steps.length, (i) => trainStep(views, runs, steps, charts, player, i));
  const stop = el("button", {class: "btn live-stop", type: "button", "aria-label": loc("stop training"), text: loc("■ stop")});
  stop.addEventListener("click", () => st && st.stop && st.stop());
  if (st && st.state === "running") player.node.append(stop);
  const [title, note] = trainHeading(data, docs, runs, pg);
  const training = section(title, note, player.node, el("p", {class: "note", text: trainStepsNote(runs, steps)}),
    charts.node,
    keysNote([["← →", "the previous or next logged step"], ["Home / End", "the first or last step"],
              ["▶ play", "run through the steps"],
              ["hover", loc("a cell's weight") + (views[0].spec.path ? loc(" and its path at the slider's step") : "") +
                        loc(", a point's numbers")]]));
  if (st) training.dataset.stream = st.state;
  root.append(training,
    ...views.map((v) => section(runs.length > 1 ? locf("Attention, {0}", loc(v.run.label)) : "Attention of the probe",
      v.run.probes.some((p) => p.name) ? "The row of the word the label is read from, in each sentence, on one scale 0 … 1."
                                       : loc("Rows are queries, columns keys, one scale 0 … 1 for every step. Hover a cell for its weight") +
                                         loc(v.spec.path ? " and, beside the panels, its path at the slider's step." : "."),
      v.grid.node)),
    section("Head view", "The probe at the slider's step: a line's opacity is the weight, one colour per head; " +
            "click a colour to hide its head, hover a token for its lines.", hv.node),
    ...(docs[0].task === "lm" ? [trainLmSamples(docs, runs)] : []));
  player.show(steps.length - 1); // what was learnt; play runs it from the start
  const grow = (next) => { // more steps of the same runs, as they stream
    const fresh = trainRuns(next, next.page);
    docs = next.runs ? next.runs : [next];
    runs = next.page.runs;
    st = next.stream;
    cursor.stream(Boolean(st && st.state === "running"));
    views.forEach((v, i) => Object.assign(v, fresh[i]));
    steps = runs[0].steps.slice(0, count());
    const old = charts.node;
    charts = trainCharts(views, runs, st && st.state === "running" ? [0, st.of] : undefined);
    old.replaceWith(charts.node);
    const [t, n] = trainHeading(next, docs, runs, next.page);
    training.querySelector("h2").textContent = t;
    training.querySelector("p.note").textContent = n;
    training.querySelector("p.note + .controls + p.note").textContent = trainStepsNote(runs, steps);
    training.dataset.stream = st ? st.state : "";
    if (!st || st.state !== "running") stop.remove();
    player.setCount(steps.length);
    player.show(player.moved ? Number(player.slider.value) : steps.length - 1);
  };
  const ctl = {show: player.show, views, stream: st ? st.id : null, runs: runs.length, grow,
               moved: () => (player.moved ? Number(player.slider.value) : null),
               replace: (next) => { root.replaceChildren(); trainPage(root, next, next.page); }};
  root.attnTrain = ctl;
  attnPage.state.kind = "train";
  attnPage.train = ctl;
}

// A language model's page (attn train --task lm): what each model wrote
// after training, why the one without the mask cannot, and why the page
// has no controls.
function trainLmSamples(docs, runs) {
  const parts = docs.map((d, i) => {
    if (!d.sample) return null;
    const who = d.causal ? "causal" : "no mask";
    return el("div", {class: "lm-sample"},
      el("h3", {text: locf("{0}: {1} characters after “{2}”, temperature {3}, seed {4}", loc(who),
                           [...d.sample.text].length, d.sample.prompt, d.sample.temperature, d.sample.seed)}),
      el("pre", {text: d.sample.prompt + d.sample.text}));
  }).filter(Boolean);
  const why = runs.length > 1
    ? [el("p", {text: loc("Without the mask each position sees the next character and learns to copy it; at " +
                          "generation time the future is not there, so the no-mask model cannot generate.")})]
    : [];
  return section("Samples", locf("No controls on this page: the text it was trained on ({0}) is a file the " +
                                 "page does not hold. Run the command again to train on other settings.", docs[0].data),
                 ...parts, ...why);
}

// The note under the slider: how many logged steps it has
function trainStepsNote(runs, steps) {
  const stride = runs[0].stride > 1 ? locf(" (every {0}th logged step kept for the heatmaps)", runs[0].stride) : "";
  return locf("{0} logged steps{1}; the heatmaps, the head view and the curves' cursor show the slider's step.", steps.length, stride);
}

// Step i of the slider: every run's heatmaps, the curves' cursor, the line
// beside the slider
function trainStep(views, runs, steps, charts, player, i) {
  const s = steps[i];
  for (const v of views) v.grid.update(v.att.subarray(i * v.per, (i + 1) * v.per));
  if (views.cursor) views.cursor.move(s);
  charts.loss.setCursor(s);
  charts.acc.setCursor(s);
  const parts = views.map((v) => {
    const h = v.doc.history.find((e) => e.step === s);
    const label = runs.length > 1 ? `${loc(v.run.label)}: ` : "";
    return h ? label + locf("loss {0} · accuracy {1}", h.loss.toFixed(4), pct(h.train_accuracy)) +
               (h.heldout_accuracy != null ? locf(" · held-out {0}", pct(h.heldout_accuracy)) : "")
             : label + loc("before training");
  });
  player.info.textContent = locf("step {0} of {1}", s, steps[steps.length - 1]) + ` · ${parts.join("  |  ")}`;
  attnPage.state.step = {index: i, step: s};
}
