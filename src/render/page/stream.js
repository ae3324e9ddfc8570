// stream.js — training you watch (SPEC.md §14). A rerun of `train` in the
// page's worker streams each logged step as it comes (ATTN_PAGE_STREAM,
// cmd/train/train_page.h: a line for each run, then one for each logged
// step with its loss and the probe's attention); the train view in the
// panel's views (train.js) grows with them — heatmaps, curves, the step
// slider, the heading with an estimate of the time left — and has a stop
// button. The finished run's page data then replaces it, as a rerun
// without the stream would draw it.

// A panel's running worker (its AbortController), by panel: a newer run
// stops the older one (a training's stream, or any other rerun in a
// worker, such as the scale sweep's).
const liveStreams = new WeakMap();

// The train view in the views after panel (train.js marks it), or null
function streamTrainView(panel) {
  const views = panel.nextElementSibling;
  if (!views) return null;
  return views.dataset.trainView ? views : views.querySelector("[data-train-view]");
}

// The task argv trains: --task's, "data" for --data, else the default
function streamTask(argv) {
  const i = argv.indexOf("--task");
  if (i > 0 && i + 1 < argv.length) return argv[i + 1];
  return argv.includes("--data") ? "data" : "reverse";
}

// How many runs argv makes: --compare-posenc two (three with the learned
// P), --compare-layers two, else one
function streamRuns(argv) {
  if (argv.includes("--compare-posenc")) return argv.includes("learned") ? 3 : 2;
  return argv.includes("--compare-layers") ? 2 : 1;
}

// One line of the stream into st: a run's first line opens it; a step's
// adds its figures and, when kept, its attention.
function streamRecord(st, rec) {
  if (rec.kind !== undefined) { // the run's line
    st.runs[rec.run] = {head: rec, steps: [], att: [], history: []};
    st.cmap = rec.cmap;
    st.command = rec.command;
    st.runStart = performance.now();
    st.runFrom = null;
    return;
  }
  const run = st.runs[rec.run];
  if (!run) return;
  if (rec.history) run.history.push(rec.history);
  if (rec.attention) {
    run.steps.push(rec.step);
    run.att.push(tensor(rec.attention).data);
  }
  // the time per step from the first step made (step 0's time is the
  // module's start)
  if (st.runFrom === null && rec.step > 0) st.runFrom = {step: rec.step, at: performance.now()};
  st.last = {run: rec.run, step: rec.step, at: performance.now()};
}

// Seconds left, from the time per step measured so far in this run (the
// runs still to come take as long): null before two steps are seen.
function streamLeft(st) {
  const f = st.runFrom, l = st.last;
  if (!f || !l || l.step <= f.step) return null;
  const per = (l.at - f.at) / 1000 / (l.step - f.step);
  const of = st.runs[l.run].head.steps;
  return per * ((of - l.step) + (st.nruns - 1 - l.run) * of);
}

// The page data of the steps so far: a finished page's shape (train.js
// draws it), "stream" saying where the run is.
function streamData(st, state) {
  const runs = st.runs.filter(Boolean);
  const page = {kind: "train", title: loc("attn train"), command: st.command, cmap: st.cmap,
    runs: runs.map((r) => {
      const h = r.head, per = r.att.length ? r.att[0].length : 0;
      const all = new Float32Array(per * r.att.length);
      r.att.forEach((a, i) => all.set(a, i * per));
      return {label: h.label, layers: h.layers, heads: h.heads, length: h.length, causal: h.causal,
              stride: h.stride, probes: h.probes, steps: r.steps.slice(),
              attention: {shape: [r.att.length, h.probes.length, h.layers, h.heads, h.length, h.length], data: all}};
    })};
  const task = streamTask(st.argv);
  const docs = runs.map((r) => ({command: "train", task, steps: r.history.length ? r.history[r.history.length - 1].step : 0,
                                 history: r.history.slice(), final: null}));
  const last = runs[runs.length - 1], lastHist = last.history[last.history.length - 1];
  const stream = {id: st, state, run: runs.length - 1, nruns: st.nruns, label: last.head.label,
                  step: st.last ? st.last.step : 0, of: last.head.steps,
                  loss: lastHist ? lastHist.loss : null, left: streamLeft(st), stop: st.stop};
  if (runs.length === 1 && st.nruns === 1) return {...docs[0], page, stream};
  return {command: "train", runs: docs, page, stream};
}

// Draw the steps so far into the panel's train view: a new run's first
// step builds the view again, the others grow it.
function streamDraw(st, panel, state) {
  const view = streamTrainView(panel);
  const runs = st.runs.filter(Boolean);
  if (!view || !view.attnTrain || runs.length === 0 || runs[runs.length - 1].steps.length === 0) return;
  const data = streamData(st, state);
  if (view.attnTrain.stream === st && view.attnTrain.runs === runs.length) view.attnTrain.grow(data);
  else view.attnTrain.replace(data);
  // the views show the new run: not dimmed as a view waiting for its rerun
  if (panel.nextElementSibling) panel.nextElementSibling.style.opacity = "1";
}

// Run argv in the worker for the panel (live.js's rerun): train streams
// its steps into the panel's views, anything else shows its progress
// lines in status. Resolves to the finished run's page data, or null when
// the learner stopped it (or a newer run did); current() says whether this
// run is still the panel's newest.
async function liveWorkerRun(argv, panel, status, current) {
  const before = liveStreams.get(panel);
  if (before) before.abort();
  const progress = (line) => { if (current()) status.textContent = line; };
  const ctrl = new AbortController();
  liveStreams.set(panel, ctrl);
  if (argv[0] !== "train") { // a newer value stops this rerun's worker
    try {
      return await attnLive.pageDataInWorker(argv, progress, {signal: ctrl.signal});
    } catch (e) {
      if (e.stopped) return null;
      throw e;
    } finally {
      if (liveStreams.get(panel) === ctrl) liveStreams.delete(panel);
    }
  }
  const st = {argv, nruns: streamRuns(argv), runs: [], last: null, runFrom: null, cmap: null, command: null,
              stop: () => ctrl.abort(), moved: null, pending: "", queued: false, ended: false};
  const onStream = (text) => {
    st.pending += text;
    const lines = st.pending.split("\n");
    st.pending = lines.pop();
    for (const line of lines) if (line) streamRecord(st, JSON.parse(line));
    if (!st.queued) {
      st.queued = true;
      requestAnimationFrame(() => {
        st.queued = false;
        // not once the run has ended: its finished data is drawn instead
        if (current() && !ctrl.signal.aborted && !st.ended) streamDraw(st, panel, "running");
      });
    }
  };
  try {
    const data = await attnLive.pageDataInWorker(argv, progress, {onStream, signal: ctrl.signal});
    st.ended = true;
    // the slider where the learner left it, once the finished run is drawn
    const view = streamTrainView(panel), moved = view && view.attnTrain ? view.attnTrain.moved() : null;
    if (moved !== null) setTimeout(() => {
      const now = streamTrainView(panel);
      if (now && now.attnTrain) now.attnTrain.show(moved);
    });
    return data;
  } catch (e) {
    st.ended = true;
    if (!e.stopped) throw e;
    if (current()) { // the learner's stop: the steps so far stay
      streamDraw(st, panel, "stopped");
      status.textContent = "";
    }
    return null;
  } finally {
    if (liveStreams.get(panel) === ctrl) liveStreams.delete(panel);
  }
}
