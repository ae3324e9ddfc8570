// live.js — the page's own attn (SPEC.md §14): window.attn, and the
// controls that rerun it and redraw the page's views.
//
// window.attn.ready resolves once the module in the element #attn-module
// is compiled; window.attn.run(argv) resolves to what `attn ARGV --json -`
// prints, or rejects with attn's one line (.code: its exit status). A
// page written by an attn built without the module has no such element:
// ready rejects, and the page says it is static.
//
// The controls (LIVE_CONTROLS, by command) each carry data-attn-option,
// the option they set. A change reruns the command with the page's data
// sent to descriptor 3 (wasi.js, cmd/page_out.h) and draws the views
// again from it, as the page drew them first; the panel's command line
// (class attn-command; on a page of one command, the element
// #attn-command) shows the command that reproduces what the views show.
// Several panels can share a page (the tour: one for each run with a
// view), each rerunning its own command: their elements' ids carry the
// panel's key. Training, and complexity's timed layers, run in a worker,
// with their progress, while the page stays responsive.

const attnLive = (() => {
  let module = null;
  const ready = new Promise((resolve, reject) => {
    const start = () => {
      const node = document.getElementById("attn-module");
      if (!node) {
        reject(new Error(loc("this page was written by an attn built without its WebAssembly module: it shows one run and cannot recompute")));
        return;
      }
      const t0 = performance.now();
      attnWasi.compile(node.textContent.trim()).then((m) => {
        module = m;
        attnPage.moduleMs = performance.now();
        attnPage.compileMs = attnPage.moduleMs - t0;
        document.body.dataset.attnReady = "1";
        resolve();
      }, reject);
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  });
  ready.catch(() => {}); // a static page: said in its controls, not as an error

  function checkArgv(argv) {
    if (!Array.isArray(argv)) throw new TypeError("attn.run(argv): argv is an array of strings");
    return argv.map(String);
  }

  // attn ARGV --json -: its text, or an Error with attn's line and code;
  // opts.stdin (text or bytes): its standard input, e.g. a model for
  // `translate --input -`
  async function run(argv, opts) {
    const words = checkArgv(argv);
    await ready;
    return attnWasi.settle(attnWasi.run(module, [...langWords(), ...words, "--json", "-"],
                                        {stdin: opts && opts.stdin}));
  }

  // The page's data for attn ARGV --html -, parsed (in this thread)
  // (stdin: text for its standard input, or undefined)
  async function pageData(argv, stdin) {
    await ready;
    const text = attnWasi.settle(attnWasi.run(module, [...langWords(), ...argv, "--html", "-"],
                                              {pageData: true, stdin}), "pageData");
    return JSON.parse(text);
  }

  // The same in a worker: onProgress(line) hears each line attn writes on
  // standard error (train's "step 20/300: …") while it runs; opts.onStream
  // (text), if given, each piece of train's stream of steps (wasi.js,
  // cmd/page_out.h) as it is written; opts.signal (an AbortSignal) stops
  // the worker: the promise then rejects with an Error whose .stopped is
  // true.
  async function pageDataInWorker(argv, onProgress, opts) {
    await ready;
    const onStream = opts && opts.onStream, signal = opts && opts.signal;
    const source = "const attnWasi = (" + attnWasiFactory.toString() + ")();\n" +
      "onmessage = (e) => {\n" +
      "  const {module, argv, stream} = e.data;\n" +
      "  let pending = '';\n" +
      "  const onStderr = (t) => {\n" +
      "    pending += t;\n" +
      "    const lines = pending.split('\\n');\n" +
      "    pending = lines.pop();\n" +
      "    for (const line of lines) postMessage({line});\n" +
      "  };\n" +
      "  const onStream = stream ? (text) => postMessage({stream: text}) : undefined;\n" +
      "  const r = attnWasi.run(module, argv, {pageData: true, onStderr, onStream});\n" +
      "  postMessage({done: true, code: r.code, stderr: r.stderr, pageData: r.pageData});\n" +
      "};\n";
    const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
    const worker = new Worker(url);
    let stop = null;
    try {
      return await new Promise((resolve, reject) => {
        stop = () => {
          const e = new Error("stopped");
          e.stopped = true;
          reject(e);
        };
        if (signal && signal.aborted) return stop();
        if (signal) signal.addEventListener("abort", stop);
        worker.onmessage = (e) => {
          if (e.data.stream !== undefined) { onStream(e.data.stream); return; }
          if (!e.data.done) { if (onProgress) onProgress(e.data.line); return; }
          try {
            resolve(JSON.parse(attnWasi.settle(e.data, "pageData")));
          } catch (err) { reject(err); }
        };
        worker.onerror = (e) => reject(new Error(e.message || loc("the worker failed")));
        worker.postMessage({module, argv: [...langWords(), ...argv, "--html", "-"],
                            stream: Boolean(onStream)});
      });
    } finally {
      if (signal && stop) signal.removeEventListener("abort", stop);
      worker.terminate();
      URL.revokeObjectURL(url);
    }
  }

  // What `attn ARGV` prints for a person (text, no --json): the text a
  // page's printed block shows, rerun with its view. opts.worker: run in
  // a worker (a training), the page staying responsive. Rejects as run.
  async function runText(argv, opts) {
    const words = [...langWords(), ...checkArgv(argv)];
    await ready;
    if (!(opts && opts.worker)) return attnWasi.settle(attnWasi.run(module, words));
    const source = "const attnWasi = (" + attnWasiFactory.toString() + ")();\n" +
      "onmessage = (e) => { const r = attnWasi.run(e.data.module, e.data.argv);\n" +
      "  postMessage({code: r.code, stdout: r.stdout, stderr: r.stderr}); };\n";
    const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
    const worker = new Worker(url);
    try {
      return await new Promise((resolve, reject) => {
        worker.onmessage = (e) => { try { resolve(attnWasi.settle(e.data)); } catch (err) { reject(err); } };
        worker.onerror = (e) => reject(new Error(e.message || loc("the worker failed")));
        worker.postMessage({module, argv: words});
      });
    } finally {
      worker.terminate();
      URL.revokeObjectURL(url);
    }
  }

  return {ready, run, pageData, pageDataInWorker, runText};
})();
window.attn = {ready: attnLive.ready, run: attnLive.run};

// The words of a command line as cli_put_word writes them: plain, or in
// single quotes (a quote inside as '\'').
function shellWords(line) {
  const words = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === " ") i++;
    if (i >= line.length) break;
    let w = "";
    while (i < line.length && line[i] !== " ") {
      if (line[i] === "'") {
        const end = line.indexOf("'", i + 1);
        w += line.slice(i + 1, end < 0 ? line.length : end);
        i = end < 0 ? line.length : end + 1;
      } else if (line[i] === "\\" && i + 1 < line.length) {
        w += line[i + 1];
        i += 2;
      } else {
        w += line[i++];
      }
    }
    words.push(w);
  }
  return words;
}

function shellQuote(w) {
  return w !== "" && !/[ \t\n"'\\$`|&;<>()*?[\]#~!{}]/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'";
}

// Options that name a file or time a run: not carried into a rerun.
const LIVE_DROPPED = new Set(["--html", "--png", "--json", "--plot", "--weights-png", "--similarity",
                              "--save", "--font", "--input", "-i", "--load", "--data"]);
const LIVE_DROPPED_FLAGS = new Set(["--time", "--repeat", "--threads", "--color"]);

// The shape of a tensor of the page data: {shape} as the page writes a
// large one, or nested arrays.
function liveDims(t) {
  if (t && !Array.isArray(t) && Array.isArray(t.shape)) return t.shape;
  const dims = [];
  for (let x = t; Array.isArray(x); x = x[0]) dims.push(x.length);
  return dims;
}

// score's hiddens: the rows of the additive scorer's W_q, the first run
// that has one (dot and sum have none).
function liveScoreHiddens(d) {
  for (const r of d.results) if (r.state_dict && r.state_dict["W_q.weight"]) return liveDims(r.state_dict["W_q.weight"])[0];
  return null;
}

// multihead's and selfattn's scoring: additive when the layer has
// d2l's additive scorer (its w_v), else the scaled dot product.
function liveScoring(d) {
  return d.state_dict && d.state_dict["attention.w_v.weight"] ? "additive" : "dot";
}

// "ones" when every number of the tensor t is 1, "random" when one is
// not, null when the page omitted them.
function liveOnes(t) {
  if (Array.isArray(t)) return t.flat(Infinity).every((x) => x === 1) ? "ones" : "random";
  if (!t || typeof t.base64 !== "string") return null;
  const bytes = Uint8Array.from(atob(t.base64), (c) => c.charCodeAt(0));
  const v = new Float32Array(bytes.buffer, 0, bytes.length >> 2);
  return v.every((x) => x === 1) ? "ones" : "random";
}

// The deltas of posenc's rotation check as --check-relative takes them:
// δ, or FROM:TO.
function liveRange(deltas) {
  if (!deltas.length) return null;
  const lo = Math.min(...deltas), hi = Math.max(...deltas);
  return lo === hi ? String(lo) : lo + ":" + hi;
}

// valid_lens as --valid-lens writes them: 3,2 (one per example), 1,2;3,4
// (one per query), none (null, or null for every example).
function liveLens(v) {
  if (Array.isArray(v) && v.every((x) => x === null)) return "none";
  if (!Array.isArray(v)) return v === null || v === undefined ? "none" : String(v);
  return v.map((x) => (Array.isArray(x) ? x.join(",") : String(x))).join(Array.isArray(v[0]) ? ";" : ",");
}

// By command: the controls. kind: int, real, text (a list), choice, flag,
// set (check boxes of valid names: a comma list, in the choices' order),
// lens (--valid-lens: one slider per example, 1 to spec.most(data) keys,
// that bound following the slider of spec.keys when there is one; a
// text field when the lengths are per query or none).
// A flag's only: the options that go only with it (attn refuses them
// alone), taken out of the command with it and given back when it is
// set again.
const LIVE_CONTROLS = {
  multihead: [
    {option: "--queries", kind: "int", min: 1, max: 16, slider: true, label: "queries", from: (d) => liveDims(d.queries)[1]},
    {option: "--kv", kind: "int", min: 1, max: 16, slider: true, label: "keys", from: (d) => liveDims(d.keys)[1]},
    {option: "--hiddens", kind: "int", min: 1, max: 128, slider: true, label: "hiddens", from: (d) => d.shape[2]},
    {option: "--heads", kind: "int", min: 1, max: 128, slider: true, divides: "--hiddens", label: "heads",
     from: (d) => d.num_heads},
    {option: "--valid-lens", kind: "lens", label: "valid lengths", keys: "--kv",
     from: (d) => liveLens(d.valid_lens), most: (d) => liveDims(d.keys)[1]},
    {option: "--score", kind: "choice", choices: ["dot", "additive"], label: "scoring", from: liveScoring},
    {option: "--causal", kind: "flag", label: "causal"},
    {option: "--fill", kind: "choice", choices: ["ones", "random"], label: "inputs",
     from: (d) => liveOnes(d.queries), fallback: "ones"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", fallback: "0"},
  ],
  selfattn: [
    {option: "--tokens", kind: "text", label: "tokens"},
    {option: "--hiddens", kind: "int", min: 1, max: 128, slider: true, label: "hiddens", from: (d) => d.shape[2]},
    {option: "--heads", kind: "int", min: 1, max: 128, slider: true, divides: "--hiddens", label: "heads",
     from: (d) => d.num_heads},
    {option: "--valid-lens", kind: "lens", label: "valid lengths",
     from: (d) => liveLens(d.page.rows.map((r) => r.valid_lens)),
     most: (d) => liveDims(d.X)[1]},
    {option: "--score", kind: "choice", choices: ["dot", "additive"], label: "scoring", from: liveScoring},
    {option: "--causal", kind: "flag", label: "causal"},
    {option: "--posenc", kind: "flag", label: "add P"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", fallback: "0"},
  ],
  posenc: [
    {option: "--dim", kind: "int", min: 1, max: 128, slider: true, label: "dim", from: (d) => d.dim},
    {option: "--steps", kind: "int", min: 1, max: 200, slider: true, label: "steps", from: (d) => d.steps},
    {option: "--check-relative", kind: "text", label: "δ of the rotation check", upper: (d) => d.steps - 1,
     from: (d) => liveRange(d.page.check_relative.map((r) => r.delta))},
    {option: "--layout", kind: "choice", choices: ["interleaved", "concat"], label: "layout", from: (d) => d.layout},
    // no --rope: the page's views are P's (`posenc --rope --html` is refused)
  ],
  pool: [
    {option: "--method", kind: "set", choices: ["average", "nonparametric", "parametric", "additive"], label: "method",
     from: (d) => d.results.map((r) => r.method)},
    {option: "--kernel", kind: "set", choices: ["gaussian", "boxcar", "constant", "epanechikov"], label: "kernel",
     from: (d) => d.results.map((r) => r.kernel).filter((k) => k), fallback: ["gaussian"]},
    {option: "--sigma", kind: "text", label: "σ", log: true, low: 0.01, high: 10,
     from: (d) => d.results.filter((r) => r.method === "nonparametric").map((r) => r.sigma)
       .filter((v, i, all) => all.indexOf(v) === i).join(",") || null, fallback: "1"},
    {option: "--epochs", kind: "int", min: 0, max: 1000, label: "epochs",
     from: (d) => { const r = d.results.find((x) => x.losses); return r ? r.losses.length : null; }, fallback: "5"},
    {option: "--lr", kind: "real", min: 0, max: 100, label: "lr", fallback: "0.5", log: true, low: 0.0001, high: 10},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", fallback: "0"},
  ],
  score: [
    {option: "--valid-lens", kind: "lens", label: "valid lengths",
     from: (d) => liveLens(d.results[0].valid_lens),
     most: (d) => liveDims(d.results[0].keys)[1]},
    {option: "--score", kind: "choice", choices: ["additive", "dot", "general", "sum"], label: "scoring",
     none: "additive and dot", from: (d) => (d.results.length === 1 ? d.results[0].score : "")},
    {option: "--score-hiddens", kind: "int", min: 1, max: 64, slider: true, label: "hiddens",
     from: (d) => liveScoreHiddens(d), fallback: "8",
     unused: ["--score", ["dot", "general", "sum"], "only the additive scorer has hidden units"]},
    {option: "--keys", kind: "choice", choices: ["ones", "random"], label: "keys",
     from: (d) => liveOnes(d.results[0].keys), fallback: "ones"},
    {option: "--queries", kind: "int", min: 1, max: 16, slider: true, label: "queries",
     from: (d) => liveDims(d.results[0].queries)[1]},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", fallback: "0"},
  ],
  complexity: [
    {option: "--n", kind: "int", min: 1, max: 100000, log: true, low: 1, high: 100000, label: "n", from: (d) => d.n},
    {option: "--d", kind: "int", min: 1, max: 4096, log: true, low: 1, high: 4096, label: "d", from: (d) => d.d},
    {option: "--k", kind: "int", min: 2, max: 100, slider: true, label: "k", from: (d) => d.k},
    {option: "--measure", kind: "flag", label: "time the layers",
     only: ["--sweep", "--measure-dim", "--reps", "--clock", "--seed"]},
  ],
  translate: [
    {option: "SENTENCE", positional: true, kind: "text", label: "sentence"},
    {option: "--reference", kind: "text", label: "reference", none: "none: no BLEU"},
    {option: "--all", kind: "flag", label: "self-attention too"},
  ],
  heatmap: [
    {option: "--eye", kind: "int", min: 1, max: 64, label: "eye N"},
  ],
  train: [
    {option: "--task", kind: "choice", choices: ["reverse", "previous", "apple", "induction", "translate"],
     label: "task", from: (d) => d.task ?? (d.runs && d.runs[0].task)},
    // a comparison (--compare-posenc, --compare-layers): its runs' steps
    {option: "--steps", kind: "int", min: 0, max: 2000, slider: true, label: "steps",
     from: (d) => d.steps ?? (d.runs && d.runs[0].steps)},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", fallback: "0"},
    {option: "--no-posenc", kind: "flag", label: "without P",
     unused: ["--task", "translate", "translation: the Transformer always adds P"]},
  ],
};

// `selfattn --scale-sweep`, a page of its own: the sweep's options, not
// selfattn's. --dims FROM:TO: a slider of TO (pow2: its positions the
// powers of two from FROM up to 4096, the number beside the power), FROM
// kept as it is.
const LIVE_SWEEP = [
  {option: "--dims", kind: "int", slider: true, pow2: true, min: 0, max: 12, label: "largest d",
   from: (d) => d.dims[0] + ":" + d.dims[d.dims.length - 1]},
  {option: "--samples", kind: "int", log: true, low: 100, high: 100000, label: "q, k pairs per d",
   from: (d) => d.samples},
  {option: "--kv", kind: "int", min: 2, max: 64, slider: true, label: "keys", from: (d) => d.keys},
  {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed", from: (d) => d.seed},
];

// The controls of the command argv: its LIVE_CONTROLS, or the sweep's.
function liveSpecs(argv) {
  return argv[0] === "selfattn" && argv.includes("--scale-sweep") ? LIVE_SWEEP : LIVE_CONTROLS[argv[0]];
}

// --dims's spec as the panel draws it: a slider of TO's exponent, from
// FROM's (spec.prefix "FROM:" kept); else the text field.
function livePow2Spec(spec, value) {
  const m = /^([0-9]+):([0-9]+)$/.exec(value || "");
  const lo = m ? Math.log2(Number(m[1])) : NaN, hi = m ? Math.log2(Number(m[2])) : NaN;
  if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo > hi || hi > spec.max)
    return {...spec, kind: "text", slider: false, pow2: false};
  return {...spec, min: lo, prefix: m[1] + ":"};
}
// A slider's value at position p (pow2: the power), and the position of a value.
const liveShown = (spec, p) => (spec.pow2 ? String(2 ** Number(p)) : String(p));
const livePosition = (spec, v) => (spec.pow2 ? String(Math.round(Math.log2(Number(v)))) : String(v));

// A command whose file its page holds: translate's model (the page's
// data.page.model_file), given to the module on standard input in place
// of the file its command line names (--input -), which the command line
// shown keeps.
const LIVE_STDIN = {translate: "--input"};

// argv as the module runs it, and its standard input: the file option
// of LIVE_STDIN read from "-", the page's file as text
function liveStdin(argv, fileText) {
  const option = LIVE_STDIN[argv[0]];
  if (!option || !fileText) return {argv, stdin: undefined};
  const out = argv.slice();
  const i = out.indexOf(option);
  if (i > 0 && i + 1 < out.length) out[i + 1] = "-";
  return {argv: out, stdin: fileText()};
}

// Whether argv runs in a worker: what takes seconds (training; timing the
// layers, whose sweep a tour step makes take seconds natively).
function liveInWorker(argv) {
  return argv[0] === "train" || (argv[0] === "complexity" && argv.includes("--measure")) ||
    (argv[0] === "selfattn" && argv.includes("--scale-sweep")); // a second or more at the default
}

// The command line pg.command (a page's data.page, or a run of the tour's
// data) as argv after "attn", without what names files or times the run;
// null when there is none.
function liveArgv(pg) {
  if (!pg.command) return null;
  const words = shellWords(pg.command).slice(1);
  const kept = [];
  const sentence = words[0] === "translate" && pg.sentence ? pg.sentence.source : null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i], eq = w.indexOf("=");
    const name = w.startsWith("--") && eq > 0 ? w.slice(0, eq) : w;
    if (LIVE_STDIN[words[0]] === name) { // the page holds that file
      kept.push(w);
      if (eq < 0 && i + 1 < words.length) kept.push(words[++i]);
      continue;
    }
    if (sentence !== null && w === sentence) continue; // the positional: last, below
    if (LIVE_DROPPED.has(name)) { if (eq < 0) i++; continue; }
    if (LIVE_DROPPED_FLAGS.has(name)) {
      if (name !== "--time" && eq < 0 && i + 1 < words.length && !words[i + 1].startsWith("-")) i++;
      continue;
    }
    kept.push(w);
  }
  if (sentence !== null) kept.push(sentence);
  return kept;
}

// The value of option in argv: its word after, true for a flag, or null;
// a positional (translate's sentence) is argv's last word.
function liveValue(argv, spec) {
  if (spec.positional) return argv.length > 1 ? argv[argv.length - 1] : null;
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === spec.option) return spec.kind === "flag" ? true : (argv[i + 1] ?? "");
    if (argv[i].startsWith(spec.option + "=")) return argv[i].slice(spec.option.length + 1);
  }
  return null;
}

// argv with option set to value ("" or false: removed)
function liveSet(argv, spec, value) {
  if (spec.positional) return [...argv.slice(0, -1), String(value)];
  // a command with a positional keeps it last
  const tail = (LIVE_CONTROLS[argv[0]] || []).some((s) => s.positional) ? argv.slice(-1) : [];
  const out = [argv[0]];
  for (let i = 1; i < argv.length - tail.length; i++) {
    if (argv[i] === spec.option) { if (spec.kind !== "flag") i++; continue; }
    if (argv[i].startsWith(spec.option + "=")) continue;
    out.push(argv[i]);
  }
  if (value === true) out.push(spec.option);
  else if (value !== false && value !== "" && value !== null) out.push(spec.option, String(value));
  return [...out, ...tail];
}

// About the columns text takes in a field: 2 for each character from U+1100 on
// (Hangul, CJK, …), 1 for the others.
function liveColumns(text) {
  let n = 0;
  for (const ch of String(text)) n += ch.codePointAt(0) >= 0x1100 ? 2 : 1;
  return n;
}

// argv without the options named (each with its value), and the words taken.
function liveTake(argv, names) {
  const rest = [argv[0]], taken = [];
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i], eq = w.indexOf("=");
    if (!names.includes(w.startsWith("--") && eq > 0 ? w.slice(0, eq) : w)) { rest.push(w); continue; }
    taken.push(w);
    if (eq < 0 && i + 1 < argv.length) taken.push(argv[++i]);
  }
  return {rest, taken};
}

// The control of spec; its id attn-opt-NAME, or attn-opt-KEY-NAME in a
// panel with a key.
function liveInput(spec, value, key) {
  const attrs = {"data-attn-option": spec.option, id: "attn-opt-" + (key ? key + "-" : "") + spec.option.slice(2),
                 "aria-label": spec.option};
  if (spec.kind === "flag") {
    const box = el("input", {...attrs, type: "checkbox"});
    box.checked = value === true;
    return box;
  }
  if (spec.kind === "set") { // value: the names checked, a comma list
    const on = new Set(String(value ?? "").split(",").filter((w) => w));
    const group = el("span", {...attrs, role: "group", class: "live-set"});
    for (const c of spec.choices) {
      const box = el("input", {type: "checkbox", "data-attn-choice": c, "aria-label": spec.option + " " + c});
      box.checked = on.has(c);
      group.append(el("label", {class: "live-choice"}, box, el("span", {text: c})));
    }
    group.value = [...on].join(",");
    return group;
  }
  if (spec.kind === "lens" && spec.most) { // value: 3,2, a slider each
    const group = el("span", {...attrs, role: "group", class: "live-lens"});
    String(value).split(",").forEach((n, b) => {
      const range = el("input", {type: "range", min: 1, max: spec.most, step: 1, "data-attn-example": String(b),
                                 "aria-label": locf("{0} example {1}", spec.option, b)});
      range.value = n;
      const number = el("output", {class: "live-number", text: n});
      group.append(el("label", {class: "live-choice"}, el("span", {text: locf("ex {0}", b)}), range, number));
    });
    group.value = String(value);
    return group;
  }
  if (spec.kind === "choice") { // a blank only when the value in force is unknown
    // (spec.none: what runs without the option, e.g. score's two functions)
    const blank = spec.none ? [el("option", {value: "", text: loc(spec.none)})]
      : value === null || value === undefined ? [el("option", {value: "", text: loc("(default)")})] : [];
    const sel = el("select", attrs, ...blank, ...spec.choices.map((c) => el("option", {value: c, text: c})));
    sel.value = value ?? "";
    return sel;
  }
  if (spec.log) { // its position 0…1000 from spec.low to spec.high, log-scale
    const range = el("input", {...attrs, type: "range", min: 0, max: 1000, step: 1, class: "live-log"});
    range.value = String(liveLogPosition(spec, Number(value)));
    return range;
  }
  if (spec.slider) {
    const range = el("input", {...attrs, type: "range", min: spec.min, max: spec.max, step: 1});
    range.value = value === null || value === undefined ? "" : livePosition(spec, value);
    return range;
  }
  const numeric = spec.kind === "int" || spec.kind === "real";
  const input = el("input", {...attrs, type: numeric ? "number" : "text",
                             ...(value === null || value === undefined ? {placeholder: loc(spec.none || "default")} : {}),
                             size: numeric ? 6 : Math.min(48, Math.max(14, liveColumns(value ?? "") + 2))});
  if (numeric) {
    input.min = spec.min;
    input.max = spec.max;
    input.step = spec.kind === "int" ? 1 : "any";
  }
  input.value = value ?? "";
  return input;
}

// A log-scale slider's position (0…1000) for the value v, and the value,
// three significant digits, at a position.
function liveLogPosition(spec, v) {
  const t = Math.log(v / spec.low) / Math.log(spec.high / spec.low);
  return Math.round(1000 * Math.min(1, Math.max(0, t)));
}
function liveLogValue(spec, position) {
  const v = Number((spec.low * Math.pow(spec.high / spec.low, Number(position) / 1000)).toPrecision(3));
  return String(spec.kind === "int" ? Math.round(v) : v);
}

// The divisors of n, from 1 up: the heads a layer of n hiddens can have.
function liveDivisors(n) {
  const out = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

// Of the divisors of n, the nearest to v (the smaller on a tie).
function liveNearestDivisor(n, v) {
  let best = 1;
  for (const d of liveDivisors(n)) if (Math.abs(d - v) < Math.abs(best - v)) best = d;
  return best;
}

// The value in force of a slider's option: the command's word for it,
// else what the run itself reports in its page data (spec.from), so a
// control never shows a placeholder.
function liveInForce(argv, spec, data) {
  const given = liveValue(argv, spec);
  if (given !== null && given !== "") return given;
  const fallback = spec.fallback === undefined ? null : spec.fallback; // attn's default
  if (!spec.from || !data || data.command !== argv[0])
    return spec.kind === "set" || fallback === null ? null : fallback;
  if (spec.kind === "set") {
    const seen = new Set(spec.from(data));
    const list = spec.choices.filter((c) => seen.has(c));
    return (list.length ? list : spec.fallback || []).join(",") || null;
  }
  const v = spec.from(data);
  return v === undefined || v === null ? fallback : String(v);
}

// A lens spec as the panel draws it: sliders (spec.most the keys, from
// the run's data) when value is one length per example, else a text field.
function liveLensSpec(spec, value, argv, data) {
  const most = spec.most && data && data.command === argv[0] ? spec.most(data) : null;
  const lens = /^[0-9]+(,[0-9]+)*$/.test(value || "") ? value.split(",").map(Number) : null;
  if (!(most >= 1) || !lens || lens.some((n) => n < 1 || n > most)) return {...spec, kind: "text", most: null};
  return {...spec, most};
}

// posenc's δ (spec.upper(data): the largest δ the run's positions allow):
// a slider of δ, or of TO in FROM:TO (spec.prefix "FROM:" kept), from
// FROM up; else the text field.
function liveUpperSpec(spec, value, argv, data) {
  const most = data && data.command === argv[0] ? spec.upper(data) : null;
  const m = /^([0-9]+:)?([0-9]+)$/.exec(value || "");
  const min = m && m[1] ? Number(m[1].slice(0, -1)) : 1;
  if (!m || !(most >= min) || Number(m[2]) > most) return spec;
  return {...spec, kind: "int", slider: true, min, max: most, prefix: m[1] || ""};
}

// The controls of the command argv (argv[0] has LIVE_CONTROLS), above the
// views they redraw: redraw(data, line) draws them again from a rerun's
// page data, line the command line that gave it. opts.key (a word): one
// of several panels on the page, its ids made unique with the key (the
// command line attn-command-KEY, each control attn-opt-KEY-NAME) and its
// heading one level down; opts.label names it. Without a key: the page's
// one panel, its command line #attn-command.
function liveControls(argv, redraw, opts) {
  const key = opts && opts.key;
  const specs = liveSpecs(argv);
  const command = el("code", {class: "attn-command", id: key ? "attn-command-" + key : "attn-command"});
  const status = el("span", {class: "live-status", role: "status"});
  const copy = el("button", {type: "button", class: "live-copy", text: loc("Copy")});
  const fields = el("div", {class: "live-fields"});
  const panel = el("section", {class: "live", "aria-label": (opts && opts.label) || loc("recompute")},
                   el(key ? "h3" : "h2", {text: loc("Change the inputs")}), fields,
                   el("p", {class: "live-line"}, el("span", {text: "$ "}), command, copy, status));
  if (key) panel.dataset.key = key;
  let current = argv, serial = 0;
  // the language switch (main.js) reruns the command in the new language
  panel.rerunInLanguage = () => { if (!liveInWorker(current)) rerun(); };
  const show = () => { command.textContent = "attn " + current.map(shellQuote).join(" "); };
  show();
  copy.addEventListener("click", () => {
    const text = command.textContent;
    const done = () => { status.textContent = loc("copied"); };
    if (navigator.clipboard && window.isSecureContext)
      navigator.clipboard.writeText(text).then(done, () => {});
    else {
      const range = document.createRange();
      range.selectNodeContents(command);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      if (document.execCommand("copy")) done();
    }
  });
  const rerun = async () => {
    const mine = ++serial;
    panel.dataset.busy = "1";
    status.textContent = loc("computing…");
    const t0 = performance.now();
    try {
      const run = liveStdin(current, opts && opts.fileText);
      const data = liveInWorker(current) // training streams its steps into the views (stream.js)
        ? await liveWorkerRun(current, panel, status, () => mine === serial)
        : await attnLive.pageData(run.argv, run.stdin);
      if (mine !== serial || data === null) return; // null: stopped, the steps so far shown
      attnPage.recomputeMs = performance.now() - t0;
      redraw(data, command.textContent);
      status.textContent = "";
      status.removeAttribute("data-error");
    } catch (e) {
      if (mine !== serial) return;
      status.textContent = e.message;
      status.dataset.error = String(e.code ?? "");
    } finally {
      if (mine === serial) {
        delete panel.dataset.busy;
        panel.dataset.runs = String(Number(panel.dataset.runs || 0) + 1);
      }
    }
  };
  const kept = new Map(); // a flag's only options while it is unset
  // A control the command ignores while another option has a value
  // (spec.unused: [that option, its value or values, why]) is disabled and
  // says why; a flag is also turned off and unset.
  const unusedFlags = [];
  const refresh = () => {
    for (const [spec, input, label, number] of unusedFlags) {
      const [other, value, why] = spec.unused;
      const off = [].concat(value).includes(liveValue(current, {option: other, kind: "choice"}));
      input.disabled = off;
      if (number) number.disabled = off;
      label.title = off ? loc(why) : "";
      label.classList.toggle("live-off", off);
      if (off && spec.kind === "flag" && input.checked) {
        input.checked = false;
        current = liveSet(current, spec, false);
      }
      // a value: taken out of the command (attn refuses it there), the
      // control back at attn's default
      if (off && spec.kind !== "flag" && liveValue(current, spec) !== null) {
        current = liveSet(current, spec, "");
        input.value = spec.fallback;
        if (number) number.value = spec.fallback;
      }
    }
  };
  // A slider's input event reruns, coalesced: the values moved through in
  // one frame give one run, of the latest (rerun's serial drops a stale
  // result).
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; rerun(); });
  };
  const sliders = new Map(); // option -> [spec, range, number]
  // heads: only the divisors of hiddens (the nearest when hiddens moves)
  const snapHeads = () => {
    for (const [spec, range, number, positions] of sliders.values()) {
      if (!spec.divides || !sliders.has(spec.divides)) continue;
      const n = Number(sliders.get(spec.divides)[1].value);
      if (!(n >= 1)) continue;
      const list = liveDivisors(n), old = range.value; // before max clamps it
      range.max = String(n);
      positions.replaceChildren(...list.map((d) => el("option", {value: String(d)})));
      const v = String(liveNearestDivisor(n, Number(old)));
      number.value = v;
      range.value = v;
      if (v === old) continue; // the command keeps its words, in their order
      range.value = v;
      current = liveSet(current, spec, v);
    }
  };
  // valid lengths: at most the keys (the slider of spec.keys), each
  // example's length brought down to them when they fall under it
  const lensFields = [];
  const boundLens = () => {
    for (const [spec, group] of lensFields) {
      if (!spec.keys || !sliders.has(spec.keys) || !group.querySelector("input")) continue;
      const n = Number(sliders.get(spec.keys)[1].value);
      if (!(n >= 1)) continue;
      const old = group.value;
      for (const r of group.querySelectorAll("input")) {
        r.max = String(n); // the browser clamps the value
        r.nextElementSibling.textContent = r.value;
      }
      group.value = Array.from(group.querySelectorAll("input"), (r) => r.value).join(",");
      if (group.value !== old) current = liveSet(current, spec, group.value);
    }
  };
  const data = (opts && opts.data) || (typeof attnPage !== "undefined" ? attnPage.data : null);
  for (const given of specs) {
    const inForce = liveInForce(argv, given, data);
    // a slider whose value the panel cannot know (a tour's run that leaves
    // it at attn's default) is a number field, never a slider at a guess;
    // valid lengths are sliders when one per example, within the keys
    const spec = given.slider && inForce === null ? {...given, slider: false}
      : given.kind === "lens" ? liveLensSpec(given, inForce, argv, data)
      // a log slider for one positive number (σ: not for a list)
      : given.log && !(Number(inForce) > 0) ? {...given, log: false}
      : given.pow2 ? livePow2Spec(given, inForce)
      : given.upper ? liveUpperSpec(given, inForce, argv, data) : given;
    const shown = spec.prefix !== undefined ? inForce.slice(spec.prefix.length) : inForce;
    const input = liveInput(spec, shown, key);
    const event = spec.log ? "input"
      : spec.kind === "text" || spec.kind === "real" || spec.kind === "set" ? "change" : "input";
    if (spec.kind === "lens") lensFields.push([spec, input]);
    let number = null, positions = null, timer = 0;
    if (spec.slider) {
      input.dataset.inForce = inForce ?? "";
      number = el("input", {type: "number", class: "live-number", min: liveShown(spec, spec.min),
                            max: liveShown(spec, spec.max), step: 1, "aria-label": locf("{0} value", spec.option)});
      number.value = liveShown(spec, input.value);
      number.addEventListener("input", () => {
        if (spec.pow2 && !Number.isInteger(Math.log2(Number(number.value)))) return; // powers of two only
        input.value = livePosition(spec, number.value);
        input.dispatchEvent(new Event("input"));
      });
      if (spec.divides) {
        positions = el("datalist", {id: input.id + "-positions"});
        input.setAttribute("list", positions.id);
        fields.append(positions);
      }
      sliders.set(spec.option, [spec, input, number, positions]);
    }
    if (spec.log) { // the value beside, typed exactly or set by the slider
      number = el("input", {type: "number", class: "live-number", min: 0, step: "any", "aria-label": locf("{0} value", spec.option)});
      number.value = inForce;
      number.addEventListener("input", () => {
        if (!(Number(number.value) > 0)) return;
        input.value = String(liveLogPosition(spec, Number(number.value)));
        input.dispatchEvent(new CustomEvent("input", {detail: "typed"}));
      });
    }
    if (spec.kind === "text" && !spec.positional && !spec.log) { // typing reruns, debounced
      input.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => input.dispatchEvent(new Event("change")), 150);
      });
    }
    input.addEventListener(event === "input" && input.tagName === "SELECT" ? "change" : event, (ev) => {
      if (spec.kind === "lens") { // each example's slider, its number beside
        for (const r of input.querySelectorAll("input")) r.nextElementSibling.textContent = r.value;
        input.value = Array.from(input.querySelectorAll("input"), (r) => r.value).join(",");
      }
      if (spec.kind === "set") { // the boxes checked, one at least
        const boxes = [...input.querySelectorAll("input")];
        if (!boxes.some((b) => b.checked) && ev.target.tagName === "INPUT") ev.target.checked = true;
        input.value = boxes.filter((b) => b.checked).map((b) => b.dataset.attnChoice).join(",");
      }
      if (spec.slider) {
        if (spec.divides) snapHeads(); // heads snaps to a divisor of hiddens
        number.value = liveShown(spec, input.value);
      }
      if (spec.log && ev.detail !== "typed") number.value = liveLogValue(spec, input.value);
      const value = spec.kind === "flag" ? input.checked : spec.log ? number.value.trim()
        : (spec.prefix || "") + (spec.pow2 ? liveShown(spec, input.value) // δ's and --dims's
                                 : input.value.trim()); // sliders: the upper end of FROM:TO
      if (spec.only && value === false) {
        const {rest, taken} = liveTake(current, spec.only);
        current = rest;
        kept.set(spec.option, taken);
      }
      current = liveSet(current, spec, value);
      if (spec.only && value === true) {
        current = [...current, ...(kept.get(spec.option) || [])];
        kept.delete(spec.option);
      }
      if ([...sliders.values()].some(([s]) => s.divides === spec.option)) snapHeads(); // hiddens moved
      if (lensFields.some(([s]) => s.keys === spec.option)) boundLens(); // the keys moved
      refresh();
      show();
      if (spec.slider || spec.log || spec.kind === "lens") schedule();
      else rerun();
    });
    const label = el("label", {class: "live-field"}, el("span", {text: loc(spec.label)}), input);
    if (number) label.append(number);
    if (spec.unused) unusedFlags.push([spec, input, label, number]);
    fields.append(label);
  }
  snapHeads();
  refresh();
  show();
  // Once compiled, the page's own command is run once, unseen, when it is
  // quick (not a training) and the page's only one: the engine then has
  // the module's code optimised before the first control is moved.
  const warm = liveStdin(argv, opts && opts.fileText);
  attnLive.ready.then(() => (key || liveInWorker(argv) ? null
                                : attnLive.pageData(warm.argv, warm.stdin).catch(() => null)))
    .then(() => { panel.dataset.ready = "1"; }, (e) => {
    for (const input of fields.querySelectorAll("input, select")) input.disabled = true;
    status.textContent = e.message;
  });
  return panel;
}
