// train_path.js — the numbers behind a weight on a train page (SPEC §14):
// the path of a cell of the probe's heads at the slider's step. `attn
// train ARGV --explain` runs once per command in a worker (it trains
// again, the page staying responsive, its progress shown); the "explain"
// member of its --json document (the page data)
// (cmd/train/train_explain.h) holds, for each step the page keeps, every
// probe's layers as multihead's explain documents, which examplePath
// (attention.js) reads. A page written with --explain has it already.

const trainExplainRuns = new Map(); // JSON of argv → a promise of the document

// The explain document of argv (train's), run once; seed: a document that
// has it already (the page's own data), or undefined; progress(line)
// hears the run's lines ("step 20/400: …").
function trainExplainDoc(argv, seed, progress) {
  const key = JSON.stringify(argv);
  if (!trainExplainRuns.has(key)) {
    if (trainExplainRuns.size >= 4) trainExplainRuns.delete(trainExplainRuns.keys().next().value);
    const run = seed ? Promise.resolve(seed) : attnLive.pageDataInWorker([...argv, "--explain"], progress);
    run.catch(() => trainExplainRuns.delete(key)); // a failed run is tried again on the next hover
    trainExplainRuns.set(key, run);
  }
  return trainExplainRuns.get(key);
}

// The command whose paths a train page's views show: the page's, or null
// when they have none (several runs compared; a --data or --load file the
// page does not hold).
function trainPathArgv(pg) {
  if (!pg.command || pg.runs.length !== 1) return null;
  const argv = liveArgv(pg);
  if (!argv || argv[0] !== "train") return null;
  const words = shellWords(pg.command);
  if (words.some((w) => /^--(data|load)(=|$)/.test(w))) return null;
  const task = words.indexOf("--task");
  if ((task > 0 && words[task + 1] === "lm") || words.includes("--task=lm")) return null; // its text: a file
  return argv.filter((w) => w !== "--explain");
}

// The slider's step for the paths: move(s) when it moves, stream(running)
// as a retrain streams; watchers re-show the cell shown.
function trainCursor() {
  const cur = {step: 0, running: false, watchers: [], progress: ""};
  cur.changed = () => { for (const redo of cur.watchers) redo(); };
  cur.move = (s) => { if (s !== cur.step) { cur.step = s; cur.changed(); } };
  cur.stream = (running) => { if (running !== cur.running) { cur.running = running; cur.changed(); } };
  return cur;
}

// Cell (r, h, q, k) of run at step: row r is probe ⌊r / L⌋'s layer r mod L.
function trainCell(doc, spec, run, step, r, h, q, k) {
  const ex = doc.explain;
  const at = ex && ex.steps.find((s) => s.step === step);
  if (!at) throw new Error(locf("No path kept for step {0}: --explain keeps every {1}th logged step " +
                                "(and the last) on a run this long.", step, ex ? ex.stride : "?"));
  const p = Math.floor(r / run.layers), l = r % run.layers;
  const c = examplePath(at.probes[p][l], spec, spec.rows[r], 0, h, q, k);
  c.qName += locf(" at step {0}", step); // the slider's: named on the path's first line
  if (run.layers > 1) c.outputName = locf("layer {0}'s {1}", l + 1, c.outputName);
  return c;
}

// A train view's spec.path: argv's explain document, at the cursor's step.
// data: the page's data (its own explain member, when written with
// --explain).
function trainPath(argv, data, run, cursor) {
  const seed = data.explain ? {explain: data.explain} : undefined;
  const progress = (line) => { cursor.progress = line; cursor.changed(); }; // the loading note follows the run
  return {
    argv,
    doc: () => (cursor.running ? Promise.reject(new Error(loc("The paths are computed once the training has stopped.")))
                               : trainExplainDoc(argv, seed, progress)),
    get loading() {
      return locf("computing the paths: training again in the module (attn {0} --explain)…", argv.join(" ")) +
             (cursor.progress ? ` ${cursor.progress}` : "");
    },
    watch: (redo) => cursor.watchers.push(redo),
    cell: (spec, r, h, q, k) => `${cursor.step},${Math.floor(r / run.layers)},${r % run.layers},${h},${q},${k}`,
    at: (doc, spec, r, h, q, k) => trainCell(doc, spec, run, cursor.step, r, h, q, k),
  };
}
