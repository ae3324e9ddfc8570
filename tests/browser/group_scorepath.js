// scorepath: the numbers behind a weight on attn score's page (SPEC §14).
// The page has a row per scoring function and a panel per example;
// hovering or focusing a weight shows its path, computed by the page's
// module (attn score ARGV --explain --json -): every number it shows is
// the one native attn's explain member of that result holds for that cell
// (cmd/score/score_explain.h), and its weight is --json's. Each scoring
// function draws its own parts: q·k and ÷√d (dot), W_q q, W_k k, tanh and
// w_v (additive), qᵀ W (general), Σq and Σk (sum).
module.exports = (h) => {
  const {check, attn, tmp, open, hover, until} = h;

  // The aside's lines once it shows cell, as {part: {v, shown, text}}.
  async function pathShown(page, cell) {
    await until(page, (cell) => {
      const a = document.querySelector("aside.cellpath[data-cell]");
      return a && a.dataset.cell === cell && a.dataset.state !== "loading";
    }, 30000, cell);
    return page.evaluate(() => {
      const a = document.querySelector("aside.cellpath[data-cell]");
      const parts = {};
      for (const line of a.querySelectorAll(".cp-line"))
        parts[line.dataset.part] = {v: Array.from(line.querySelectorAll(".cp-num"), (n) => Number(n.dataset.v)),
                                    shown: Array.from(line.querySelectorAll(".cp-num"), (n) => n.textContent),
                                    text: line.textContent};
      return {state: a.dataset.state, cell: a.dataset.cell, text: a.textContent, parts};
    });
  }

  // What the path of cell (b, q, k) of result r must show: native explain's numbers.
  function expected(doc, r, b, q, k) {
    const res = doc.results[r], e = res.explain;
    const want = {q: e.q[b][q], k: e.k[b][k], score: [e.scores[b][q][k]], mask: [e.masked_scores[b][q][k]],
                  row_max: [e.row_max[b][q]], row_sum_exp: [e.row_sum_exp[b][q]],
                  weight: [res.attention_weights[b][q][k]], v: e.v[b][k], output: e.output[b][q]};
    if (e.score === "dot") want.scaled = [e.scaled[b][q][k]];
    else if (e.score === "additive")
      Object.assign(want, {qa: e.qa[b][q], ka: e.ka[b][k], tanh: e.tanh[b][q][k], w_v: e.w_v});
    else if (e.score === "general") want.qw = e.qw[b][q];
    else Object.assign(want, {q_sum: [e.q_sum[b][q]], k_sum: [e.k_sum[b][k]]});
    return want;
  }

  // The shown path of cell [r, b, q, k] against native doc and json.
  function checkPath(name, shown, doc, json, cell) {
    const [r, b, q, k] = cell, kind = doc.results[r].score;
    check(`${name}: the path shows cell ${kind},${b},${q},${k}`,
          shown.state === "shown" && shown.cell === `${kind},${b},${q},${k}`, `${shown.state} ${shown.cell} ${shown.text}`);
    const want = expected(doc, r, b, q, k);
    check(`${name}: the lines are ${kind}'s`, Object.keys(shown.parts).sort().join() === Object.keys(want).sort().join(),
          Object.keys(shown.parts).join());
    for (const [part, nums] of Object.entries(want)) {
      const got = shown.parts[part];
      check(`${name}: ${part} is native --explain's`, got && got.v.length === nums.length &&
            got.v.every((x, i) => x === nums[i]), `${got && got.v} vs ${nums}`);
      check(`${name}: ${part} shown with 4 decimals`, got && got.shown.every((t, i) =>
        Math.abs(nums[i]) >= 1e5 || t === nums[i].toFixed(4)), got && got.shown.join(" "));
    }
    check(`${name}: the weight is --json's`, shown.parts.weight &&
          shown.parts.weight.v[0] === json.results[r].attention_weights[b][q][k]);
    return shown;
  }

  // Native runs of args: the page, --json and --explain --json.
  function native(args, html) {
    attn([...args, "--html", html]);
    return {json: JSON.parse(attn([...args, "--json", "-"])),
            doc: JSON.parse(attn([...args, "--explain", "--json", "-"]))};
  }

  // Hover cell (b, q, k) of row r's panel: its path, checked.
  async function hoverPath(page, name, n, cell) {
    const [r, b, q, k] = cell, kind = n.doc.results[r].score;
    await hover(page, `${kind} example ${b}`, q, k);
    return checkPath(name, await pathShown(page, `${kind},${b},${q},${k}`), n.doc, n.json, cell);
  }

  return {scorepath: async () => {
    // 1. each scoring function: random keys, two queries, a length a query
    //    (0: every key masked; 11: none)
    for (const kind of ["additive", "dot", "general", "sum"]) {
      const args = ["score", "--score", kind, "--keys", "random", "--queries", "2", "--valid-lens", "1,3;0,11"];
      const n = native(args, `${kind}.html`);
      const p = await open(tmp(`${kind}.html`), `scorepath-${kind}`);
      const {page} = p;
      await until(page, () => document.body.dataset.attnReady === "1", 30000);
      await hoverPath(page, `${kind} hover`, n, [0, 0, 1, 2]);
      await hoverPath(page, `${kind} not masked (length 11)`, n, [0, 1, 1, 7]);
      let shown = await hoverPath(page, `${kind} masked`, n, [0, 0, 0, 5]);
      check(`${kind} masked: says valid_len 1, weight 0, score -1e6`,
            /masked \(valid_len 1\)/.test(shown.parts.mask.text) && shown.parts.weight.v[0] === 0 &&
            shown.parts.mask.v[0] === -1e6, shown.parts.mask.text);
      shown = await hoverPath(page, `${kind} length 0`, n, [0, 1, 0, 4]);
      check(`${kind} length 0: every key masked, equal weights`,
            /masked \(valid_len 0\)/.test(shown.parts.mask.text) && shown.parts.weight.shown[0] === "0.1000",
            shown.parts.weight.text);
      if (kind === "general")
        check("general: W(q) = qᵀ W is key-sized (2)", /key size 2/.test(shown.parts.qw.text), shown.parts.qw.text);
      if (kind === "additive")
        check("additive: q shows the first 8 of d = 20", /first 8 of d = 20/.test(shown.parts.q.text) &&
              /…\]$/.test(shown.parts.q.text), shown.parts.q.text);
      if (kind === "sum" && h.SHOTS) await page.screenshot({path: require("path").join(h.SHOTS, "scorepath-sum-hover.png")});
      const runs = await page.evaluate(() => explainRuns.size);
      check(`${kind}: --explain run once for the page's command`, runs === 1, runs);
      await p.finish();
    }

    // 2. the default page: additive and dot, a row each, lengths per example
    const n = native(["score", "--keys", "random"], "both.html");
    const p = await open(tmp("both.html"), "scorepath-default");
    const {page} = p;
    await hoverPath(page, "default additive", n, [0, 1, 0, 3]);
    await hoverPath(page, "default dot row", n, [1, 1, 0, 3]);
    await hoverPath(page, "default dot masked", n, [1, 0, 0, 2]);
    // the keyboard: focus a panel not hovered yet, the first arrow selects (0, 0), then move right
    await page.mouse.move(0, 0);
    await page.focus('canvas[data-panel="additive example 0"]');
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowRight");
    checkPath("default keyboard", await pathShown(page, "additive,0,0,1"), n.doc, n.json, [0, 0, 0, 1]);
    // a control changed: scoring sum; the redrawn views' paths are the new command's
    await page.evaluate(() => {
      const s = document.querySelector('[data-attn-option="--score"]');
      s.value = "sum";
      s.dispatchEvent(new Event("input", {bubbles: true}));
      s.dispatchEvent(new Event("change", {bubbles: true}));
    });
    await until(page, () => !!document.querySelector('.live-views[data-redrawn="1"]'), 30000);
    const sum = {json: JSON.parse(attn(["score", "--keys", "random", "--score", "sum", "--json", "-"])),
                 doc: JSON.parse(attn(["score", "--keys", "random", "--score", "sum", "--explain", "--json", "-"]))};
    await hoverPath(page, "after --score sum", sum, [0, 1, 0, 5]);
    await p.finish();
  }};
};
