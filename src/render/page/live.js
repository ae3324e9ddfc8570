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
// again from it, as the page drew them first; #attn-command shows the
// command line that reproduces what the page shows. Training runs in a
// worker, with its progress, while the page stays responsive.

const attnLive = (() => {
  let module = null;
  const ready = new Promise((resolve, reject) => {
    const start = () => {
      const node = document.getElementById("attn-module");
      if (!node) {
        reject(new Error("this page was written by an attn built without its WebAssembly module: it shows one run and cannot recompute"));
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

  // attn ARGV --json -: its text, or an Error with attn's line and code
  async function run(argv) {
    const words = checkArgv(argv);
    await ready;
    return attnWasi.settle(attnWasi.run(module, [...words, "--json", "-"]));
  }

  // The page's data for attn ARGV --html -, parsed (in this thread)
  async function pageData(argv) {
    await ready;
    const text = attnWasi.settle(attnWasi.run(module, [...argv, "--html", "-"], {pageData: true}),
                                 "pageData");
    return JSON.parse(text);
  }

  // The same in a worker: onProgress(line) hears each line attn writes on
  // standard error (train's "step 20/300: …") while it runs.
  async function pageDataInWorker(argv, onProgress) {
    await ready;
    const source = "const attnWasi = (" + attnWasiFactory.toString() + ")();\n" +
      "onmessage = (e) => {\n" +
      "  const {module, argv} = e.data;\n" +
      "  let pending = '';\n" +
      "  const onStderr = (t) => {\n" +
      "    pending += t;\n" +
      "    const lines = pending.split('\\n');\n" +
      "    pending = lines.pop();\n" +
      "    for (const line of lines) postMessage({line});\n" +
      "  };\n" +
      "  const r = attnWasi.run(module, argv, {pageData: true, onStderr});\n" +
      "  postMessage({done: true, code: r.code, stderr: r.stderr, pageData: r.pageData});\n" +
      "};\n";
    const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
    const worker = new Worker(url);
    try {
      return await new Promise((resolve, reject) => {
        worker.onmessage = (e) => {
          if (!e.data.done) { if (onProgress) onProgress(e.data.line); return; }
          try {
            resolve(JSON.parse(attnWasi.settle(e.data, "pageData")));
          } catch (err) { reject(err); }
        };
        worker.onerror = (e) => reject(new Error(e.message || "the worker failed"));
        worker.postMessage({module, argv: [...argv, "--html", "-"]});
      });
    } finally {
      worker.terminate();
      URL.revokeObjectURL(url);
    }
  }

  return {ready, run, pageData, pageDataInWorker};
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

// By command: the controls. kind: int, real, text (a list), choice, flag.
const LIVE_CONTROLS = {
  multihead: [
    {option: "--queries", kind: "int", min: 1, max: 64, label: "queries"},
    {option: "--kv", kind: "int", min: 1, max: 64, label: "keys"},
    {option: "--hiddens", kind: "int", min: 1, max: 1024, label: "hiddens"},
    {option: "--heads", kind: "int", min: 1, max: 64, label: "heads"},
    {option: "--valid-lens", kind: "text", label: "valid lengths"},
    {option: "--score", kind: "choice", choices: ["dot", "additive"], label: "scoring"},
    {option: "--causal", kind: "flag", label: "causal"},
    {option: "--fill", kind: "choice", choices: ["ones", "random"], label: "inputs"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed"},
  ],
  selfattn: [
    {option: "--tokens", kind: "text", label: "tokens"},
    {option: "--queries", kind: "int", min: 1, max: 64, label: "queries"},
    {option: "--hiddens", kind: "int", min: 1, max: 1024, label: "hiddens"},
    {option: "--heads", kind: "int", min: 1, max: 64, label: "heads"},
    {option: "--valid-lens", kind: "text", label: "valid lengths"},
    {option: "--score", kind: "choice", choices: ["dot", "additive"], label: "scoring"},
    {option: "--causal", kind: "flag", label: "causal"},
    {option: "--posenc", kind: "flag", label: "add P"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed"},
  ],
  posenc: [
    {option: "--dim", kind: "int", min: 1, max: 512, label: "dim"},
    {option: "--steps", kind: "int", min: 1, max: 2000, label: "steps"},
    {option: "--check-relative", kind: "text", label: "δ of the rotation check"},
    {option: "--layout", kind: "choice", choices: ["interleaved", "concat"], label: "layout"},
    {option: "--rope", kind: "flag", label: "RoPE"},
  ],
  pool: [
    {option: "--method", kind: "text", label: "method"},
    {option: "--kernel", kind: "text", label: "kernel"},
    {option: "--sigma", kind: "text", label: "σ"},
    {option: "--epochs", kind: "int", min: 0, max: 1000, label: "epochs"},
    {option: "--lr", kind: "real", min: 0, max: 100, label: "lr"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed"},
  ],
  score: [
    {option: "--valid-lens", kind: "text", label: "valid lengths"},
    {option: "--score", kind: "choice", choices: ["additive", "dot"], label: "scoring"},
    {option: "--score-hiddens", kind: "int", min: 1, max: 256, label: "hiddens"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed"},
  ],
  complexity: [
    {option: "--n", kind: "int", min: 1, max: 100000, label: "n"},
    {option: "--d", kind: "int", min: 1, max: 4096, label: "d"},
    {option: "--k", kind: "int", min: 2, max: 100, label: "k"},
  ],
  heatmap: [
    {option: "--eye", kind: "int", min: 1, max: 64, label: "eye N"},
  ],
  train: [
    {option: "--task", kind: "choice", choices: ["reverse", "previous", "apple", "induction"], label: "task"},
    {option: "--steps", kind: "int", min: 0, max: 5000, label: "steps"},
    {option: "--seed", kind: "int", min: 0, max: 2147483647, label: "seed"},
    {option: "--no-posenc", kind: "flag", label: "without P"},
  ],
};
const LIVE_IN_WORKER = new Set(["train"]);

// The page's command line as argv after "attn", without what names files
// or times the run; null when the page has none.
function liveArgv(pg) {
  if (!pg.command) return null;
  const words = shellWords(pg.command).slice(1);
  const kept = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i], eq = w.indexOf("=");
    const name = w.startsWith("--") && eq > 0 ? w.slice(0, eq) : w;
    if (LIVE_DROPPED.has(name)) { if (eq < 0) i++; continue; }
    if (LIVE_DROPPED_FLAGS.has(name)) {
      if (name !== "--time" && eq < 0 && i + 1 < words.length && !words[i + 1].startsWith("-")) i++;
      continue;
    }
    kept.push(w);
  }
  return kept;
}

// The value of option in argv: its word after, true for a flag, or null.
function liveValue(argv, spec) {
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === spec.option) return spec.kind === "flag" ? true : (argv[i + 1] ?? "");
    if (argv[i].startsWith(spec.option + "=")) return argv[i].slice(spec.option.length + 1);
  }
  return null;
}

// argv with option set to value ("" or false: removed)
function liveSet(argv, spec, value) {
  const out = [argv[0]];
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === spec.option) { if (spec.kind !== "flag") i++; continue; }
    if (argv[i].startsWith(spec.option + "=")) continue;
    out.push(argv[i]);
  }
  if (value === true) out.push(spec.option);
  else if (value !== false && value !== "" && value !== null) out.push(spec.option, String(value));
  return out;
}

function liveInput(spec, value) {
  const attrs = {"data-attn-option": spec.option, id: "attn-opt-" + spec.option.slice(2),
                 "aria-label": spec.option};
  if (spec.kind === "flag") {
    const box = el("input", {...attrs, type: "checkbox"});
    box.checked = value === true;
    return box;
  }
  if (spec.kind === "choice") {
    const sel = el("select", attrs, el("option", {value: "", text: "(default)"}),
                   ...spec.choices.map((c) => el("option", {value: c, text: c})));
    sel.value = value ?? "";
    return sel;
  }
  const numeric = spec.kind === "int" || spec.kind === "real";
  const input = el("input", {...attrs, type: numeric ? "number" : "text", placeholder: "default",
                             size: numeric ? 6 : 14});
  if (numeric) {
    input.min = spec.min;
    input.max = spec.max;
    input.step = spec.kind === "int" ? 1 : "any";
  }
  input.value = value ?? "";
  return input;
}

// The controls of a page whose command is argv[0], above views; redraw(data)
// draws the views again from a rerun's page data.
function liveControls(argv, redraw) {
  const specs = LIVE_CONTROLS[argv[0]];
  const command = el("code", {id: "attn-command"});
  const status = el("span", {class: "live-status", role: "status"});
  const copy = el("button", {type: "button", class: "live-copy", text: "Copy"});
  const fields = el("div", {class: "live-fields"});
  const panel = el("section", {class: "live", "aria-label": "recompute"},
                   el("h2", {text: "Change the inputs"}), fields,
                   el("p", {class: "live-line"}, el("span", {text: "$ "}), command, copy, status));
  let current = argv, serial = 0;
  const show = () => { command.textContent = "attn " + current.map(shellQuote).join(" "); };
  show();
  copy.addEventListener("click", () => {
    const text = command.textContent;
    const done = () => { status.textContent = "copied"; };
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
    status.textContent = "computing…";
    const t0 = performance.now();
    try {
      const data = LIVE_IN_WORKER.has(current[0])
        ? await attnLive.pageDataInWorker(current, (line) => { if (mine === serial) status.textContent = line; })
        : await attnLive.pageData(current);
      if (mine !== serial) return;
      attnPage.recomputeMs = performance.now() - t0;
      redraw(data);
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
  for (const spec of specs) {
    const input = liveInput(spec, liveValue(argv, spec));
    const event = spec.kind === "text" || spec.kind === "real" ? "change" : "input";
    input.addEventListener(event === "input" && input.tagName === "SELECT" ? "change" : event, () => {
      const value = spec.kind === "flag" ? input.checked : input.value.trim();
      current = liveSet(current, spec, value);
      show();
      rerun();
    });
    fields.append(el("label", {class: "live-field"}, el("span", {text: spec.label}), input));
  }
  attnLive.ready.then(() => { panel.dataset.ready = "1"; }, (e) => {
    for (const input of fields.querySelectorAll("input, select")) input.disabled = true;
    status.textContent = e.message;
  });
  return panel;
}
