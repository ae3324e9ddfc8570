// trainpath: the numbers behind a weight on a train page (SPEC §14).
// Hovering a weight of the probe's heads shows its path at the slider's
// step, computed by the page's module (attn train ARGV --explain --json -
// in a worker); every number shown is native `--explain --json -`'s for
// that step and cell, the weight the page's own; moving the slider shows
// the same cell at the new step; a causal key says it is masked; after a
// retrain the paths are the new command's.
const path = require("path");

module.exports = (h) => {
  const {check, attn, tmp, open, hover, until, pageData, flat, shellSplit, SHOTS} = h;

  // the aside once it shows cell (its state no longer "loading")
  async function pathShown(page, cell) {
    const ok = await until(page, (cell) => {
      const a = document.querySelector("aside.cellpath[data-cell]");
      return a && a.dataset.cell === cell && a.dataset.state !== "loading";
    }, 120000, cell);
    return page.evaluate((ok) => {
      const a = document.querySelector("aside.cellpath[data-cell]");
      const parts = {};
      for (const line of a.querySelectorAll(".cp-line"))
        parts[line.dataset.part] = {v: Array.from(line.querySelectorAll(".cp-num"), (n) => Number(n.dataset.v)),
                                    text: line.textContent};
      return {ok, state: a.dataset.state, cell: a.dataset.cell, text: a.textContent, parts};
    }, ok);
  }

  // native explain's numbers for step s, probe p, layer l, cell (hd, q, k)
  function expected(doc, s, p, l, hd, q, k) {
    const st = doc.explain.steps.find((x) => x.step === s);
    const lay = st.probes[p][l], e = lay.explain;
    return {q: e.q[0][hd][q], k: e.k[0][hd][k], score: [e.scores[0][hd][q][k]], scaled: [e.scaled[0][hd][q][k]],
            mask: [e.masked_scores[0][hd][q][k]], row_max: [e.row_max[0][hd][q]],
            row_sum_exp: [e.row_sum_exp[0][hd][q]], weight: [lay.attention_weights[0][hd][q][k]],
            v: e.v[0][hd][k], output: e.head_output[0][hd][q]};
  }

  // the page's own weight of step index i, cell (p, l, hd, q, k)
  function pageWeight(data, i, p, l, hd, q, k) {
    const run = data.page.runs[0], att = flat(run.attention);
    const T = run.length, per = run.probes.length * run.layers * run.heads * T * T;
    return att[i * per + (((p * run.layers + l) * run.heads + hd) * T + q) * T + k];
  }

  // a number of the JSON (9 digits) as the float32 it was
  function same32(x, f) {
    return Math.fround(x) === f;
  }

  function checkPath(name, shown, doc, s, cell) {
    const [p, l, hd, q, k] = cell;
    check(`${name}: the path shows step ${s}'s cell ${cell}`, shown.ok && shown.state === "shown" &&
          shown.cell === [s, ...cell].join(","), `${shown.state} ${shown.cell} ${shown.text}`);
    for (const [part, nums] of Object.entries(expected(doc, s, p, l, hd, q, k))) {
      const got = shown.parts[part];
      check(`${name}: ${part} is native --explain's at step ${s}`, got && got.v.length === nums.length &&
            got.v.every((x, i) => x === nums[i]), `${got && got.v} vs ${nums}`);
    }
  }

  // the slider moved to index i as a learner drags it
  const slide = (page, i) => page.evaluate((i) => {
    const sl = document.querySelector('[data-train-view] input[type="range"]');
    sl.value = String(i);
    sl.dispatchEvent(new Event("input", {bubbles: true}));
  }, i);

  return {trainpath: async () => {
    // 1. reverse, causal: five logged steps 0, 1, 2, 4, 6
    const args = ["train", "--task", "reverse", "--steps", "6", "--log-every", "2", "--causal", "--hiddens", "16",
                  "--heads", "2"];
    attn([...args, "--html", "tp.html"]);
    const doc = JSON.parse(attn([...args, "--explain", "--json", "-"]));
    const data = pageData(tmp("tp.html")).data;
    check("the explain keeps the page's steps", JSON.stringify(doc.explain.steps.map((s) => s.step)) ===
          JSON.stringify(data.page.runs[0].steps), JSON.stringify(data.page.runs[0].steps));
    let p = await open(tmp("tp.html"), "trainpath-reverse");
    let {page} = p;
    await page.setViewportSize({width: 1400, height: 1000});
    // every text the aside shows, from now on (the loading note's progress)
    await page.evaluate(() => {
      window.cpTexts = [];
      const a = document.querySelector("aside.cellpath");
      new MutationObserver(() => window.cpTexts.push(a.dataset.state + " " + a.textContent))
        .observe(a, {childList: true, subtree: true, attributes: true});
    });
    const t0 = Date.now();
    await hover(page, "layer 1 head 2", 5, 2);
    let shown = await pathShown(page, "6,0,0,1,5,2");
    console.log(`     the path shown ${Date.now() - t0} ms after the first hover (a training in the worker)`);
    const texts = await page.evaluate(() => window.cpTexts);
    check("while computing: the note names the run and follows its steps", texts.some((t) =>
      /^loading .*computing the paths: training again in the module \(attn train .*--explain\)… step [246]\/6/.test(t)),
          texts.filter((t) => t.startsWith("loading")).join(" | "));
    check("the path names the slider's step", /q = Q_2\[5\] at step 6/.test(shown.text), shown.text);
    checkPath("last step hover", shown, doc, 6, [0, 0, 1, 5, 2]);
    check("last step: the weight is the page's", shown.parts.weight &&
          same32(shown.parts.weight.v[0], pageWeight(data, 4, 0, 0, 1, 5, 2)));
    if (SHOTS) {
      require("fs").mkdirSync(SHOTS, {recursive: true});
      await page.screenshot({path: path.join(SHOTS, "trainpath-hover.png")});
    }
    // the slider moved: the same cell at step 1, without hovering again
    await slide(page, 1);
    shown = await pathShown(page, "1,0,0,1,5,2");
    checkPath("slider to step 1", shown, doc, 1, [0, 0, 1, 5, 2]);
    check("step 1: the weight is the page's", shown.parts.weight &&
          same32(shown.parts.weight.v[0], pageWeight(data, 1, 0, 0, 1, 5, 2)));
    const tip = await hover(page, "layer 1 head 1", 3, 3);
    shown = await pathShown(page, "1,0,0,0,3,3");
    checkPath("step 1 hover", shown, doc, 1, [0, 0, 0, 3, 3]);
    check("step 1: the tooltip's weight is the path's", tip.includes(shown.parts.weight.text.split("=").pop().trim()),
          tip);
    // a key after the query: masked (causal), weight 0, score −1e6
    await hover(page, "layer 1 head 1", 2, 6);
    shown = await pathShown(page, "1,0,0,0,2,6");
    checkPath("causal cell", shown, doc, 1, [0, 0, 0, 2, 6]);
    check("causal cell: says masked (causal), weight 0, score -1e6", /masked \(causal/.test(shown.parts.mask.text) &&
          shown.parts.weight.v[0] === 0 && shown.parts.mask.v[0] === -1e6, shown.parts.mask && shown.parts.mask.text);
    // the slider to step 2: the same cell there
    await slide(page, 2);
    shown = await pathShown(page, "2,0,0,0,2,6");
    checkPath("slider to step 2", shown, doc, 2, [0, 0, 0, 2, 6]);
    const runs = await page.evaluate(() => trainExplainRuns.size);
    check("--explain run once for the page's command", runs === 1, runs);
    await p.finish();

    // 2. a stack: layer 2's heads have their own path
    const sargs = ["train", "--task", "previous", "--layers", "2", "--steps", "3", "--log-every", "1",
                   "--hiddens", "16", "--heads", "2"];
    attn([...sargs, "--html", "st.html"]);
    const sdoc = JSON.parse(attn([...sargs, "--explain", "--json", "-"]));
    p = await open(tmp("st.html"), "trainpath-stack");
    page = p.page;
    await hover(page, "layer 2 head 2", 4, 3);
    shown = await pathShown(page, "3,0,1,1,4,3");
    checkPath("stack layer 2", shown, sdoc, 3, [0, 1, 1, 4, 3]);
    check("stack layer 2: the output names the layer", /^layer 2's output/.test(shown.parts.output.text),
          shown.parts.output.text);
    await p.finish();

    // apple: 苹果's row in each sentence, probe by probe
    const aargs = ["train", "--task", "apple", "--steps", "4", "--log-every", "2"];
    attn([...aargs, "--html", "ap.html"]);
    const adoc = JSON.parse(attn([...aargs, "--explain", "--json", "-"]));
    const aprobes = pageData(tmp("ap.html")).data.page.runs[0].probes;
    p = await open(tmp("ap.html"), "trainpath-apple");
    page = p.page;
    for (const [pi, name, hd, k] of [[0, "fruit", 0, 1], [1, "company", 3, 2]]) {
      const q = aprobes[pi].at;
      await hover(page, `${name} layer 1 head ${hd + 1}`, 0, k);
      shown = await pathShown(page, [4, pi, 0, hd, q, k].join(","));
      checkPath(`apple ${name}`, shown, adoc, 4, [pi, 0, hd, q, k]);
    }
    await p.finish();

    // 3. a page written with --explain: its own member, no worker run
    attn([...sargs, "--explain", "--html", "ste.html"]);
    p = await open(tmp("ste.html"), "trainpath-own");
    page = p.page;
    await hover(page, "layer 1 head 1", 2, 0);
    shown = await pathShown(page, "3,0,0,0,2,0");
    checkPath("page's own explain", shown, sdoc, 3, [0, 0, 0, 2, 0]);
    await p.finish();

    // 4. a retrain (tick "without P"): the finished page's paths are its command's
    p = await open(tmp("tp.html"), "trainpath-retrain");
    page = p.page;
    await until(page, () => document.querySelector(".live").dataset.ready === "1", 30000);
    await page.check("#attn-opt-no-posenc");
    const done = await until(page, () => {
      const c = document.getElementById("attn-command").textContent;
      const sec = document.querySelector("[data-train-view] section.view");
      return /--no-posenc/.test(c) && sec && /^Training: reverse · without P/.test(sec.querySelector("h2").textContent);
    }, 120000);
    const command = await page.evaluate(() => document.getElementById("attn-command").textContent);
    check("retrain: the page shows the finished run without P", done, command);
    const nargs = shellSplit(command).slice(1).filter((w, i, a) => w !== "--html" && a[i - 1] !== "--html");
    const ndoc = JSON.parse(attn([...nargs, "--explain", "--json", "-"]));
    await hover(page, "layer 1 head 2", 4, 1);
    shown = await pathShown(page, "6,0,0,1,4,1");
    checkPath("after the retrain", shown, ndoc, 6, [0, 0, 1, 4, 1]);
    check("after the retrain: not the first command's numbers",
          shown.parts.q.v.join() !== expected(doc, 6, 0, 0, 1, 4, 1).q.join());
    await p.finish();
  }};
};
