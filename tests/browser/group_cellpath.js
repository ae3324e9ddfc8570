// cellpath: the numbers behind a weight (SPEC §14). Hovering or focusing a
// weight on an attention page shows its path, computed by the page's
// module (attn ARGV --explain --json -); every number it shows is the one
// native attn's explain member holds for that cell, and its weight is
// --json's. The pool page's query point dragged along x: the weights under
// the curve are --json's row for the test input nearest the pointer.
module.exports = (h) => {
  const {check, attn, tmp, open, hover, cellPoint, tooltipText, tooltipWeight, until} = h;

  // The aside's lines once it shows cell, as {part: [numbers], …}, and its text.
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

  // What the path of cell (b, hd, q, k) must show: native explain's numbers.
  function expected(doc, b, hd, q, k) {
    const e = doc.explain;
    const want = {q: e.q[b][hd][q], k: e.k[b][hd][k], score: [e.scores[b][hd][q][k]],
                  mask: [e.masked_scores[b][hd][q][k]], row_max: [e.row_max[b][hd][q]],
                  row_sum_exp: [e.row_sum_exp[b][hd][q]], weight: [doc.attention_weights[b][hd][q][k]],
                  v: e.v[b][hd][k], output: e.head_output[b][hd][q]};
    if (e.score === "dot") want.scaled = [e.scaled[b][hd][q][k]];
    else Object.assign(want, {qa: e.qa[b][hd][q], ka: e.ka[b][hd][k], tanh: e.tanh[b][hd][q][k], w_v: e.w_v});
    return want;
  }

  function checkPath(name, shown, doc, json, cell) {
    const [b, hd, q, k] = cell;
    check(`${name}: the path shows cell ${cell}`, shown.state === "shown" && shown.cell === cell.join(","),
          `${shown.state} ${shown.cell} ${shown.text}`);
    const want = expected(doc, b, hd, q, k);
    for (const [part, nums] of Object.entries(want)) {
      const got = shown.parts[part];
      check(`${name}: ${part} is native --explain's`, got && got.v.length === nums.length &&
            got.v.every((x, i) => x === nums[i]), `${got && got.v} vs ${nums}`);
      check(`${name}: ${part} shown with 4 decimals`, got && got.shown.every((t, i) =>
        Math.abs(nums[i]) >= 1e5 || t === nums[i].toFixed(4)), got && got.shown.join(" "));
    }
    check(`${name}: the weight is --json's`, shown.parts.weight &&
          shown.parts.weight.v[0] === json.attention_weights[b][hd][q][k]);
    check(`${name}: the additive parts shown only for additive scoring`,
          ("qa" in shown.parts) === (doc.explain.score === "additive") &&
          ("scaled" in shown.parts) === (doc.explain.score === "dot"));
  }

  return {cellpath: async () => {
    // 1. the chapter's multihead page (dot scoring, valid_lens [3, 2])
    attn(["multihead", "--html", "mh.html"]);
    const json = JSON.parse(attn(["multihead", "--json", "-"]));
    const doc = JSON.parse(attn(["multihead", "--explain", "--json", "-"]));
    let p = await open(tmp("mh.html"), "cellpath-multihead");
    let {page} = p;
    await until(page, () => document.body.dataset.attnReady === "1", 30000);
    const tip = await hover(page, "example 1 head 2", 3, 1);
    check("multihead: the tooltip still names query, key and weight",
          /query 3/.test(tip) && /key 1/.test(tip) && tooltipWeight(tip) &&
          tooltipWeight(tip).full === json.attention_weights[1][1][3][1], tip);
    checkPath("multihead hover", await pathShown(page, "1,1,3,1"), doc, json, [1, 1, 3, 1]);
    // a masked cell: example 1's valid_len is 2, key 4 is masked
    await hover(page, "example 1 head 2", 0, 4);
    let shown = await pathShown(page, "1,1,0,4");
    checkPath("multihead masked", shown, doc, json, [1, 1, 0, 4]);
    check("multihead masked: says masked by valid_len 2, weight 0, score -1e6",
          /masked \(valid_len 2\)/.test(shown.parts.mask.text) && shown.parts.weight.v[0] === 0 &&
          shown.parts.mask.v[0] === -1e6, shown.parts.mask && shown.parts.mask.text);
    // the keyboard: focus a panel, the first arrow selects (0, 0), then move
    await page.mouse.move(0, 0);
    await page.focus('canvas[data-panel="example 0 head 3"]');
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowDown");
    shown = await pathShown(page, "0,2,1,1");
    checkPath("multihead keyboard", shown, doc, json, [0, 2, 1, 1]);
    check("multihead keyboard: the tooltip shows the focused cell too", /query 1/.test(await tooltipText(page)));
    const runs = await page.evaluate(() => explainRuns.size);
    check("multihead: --explain run once for the page's command (cached)", runs === 1, runs);
    // a control changed: the redrawn views' paths are the new command's
    await page.evaluate(() => {
      const q = document.querySelector('[data-attn-option="--queries"]');
      q.value = "3";
      q.dispatchEvent(new Event("input", {bubbles: true}));
      q.dispatchEvent(new Event("change", {bubbles: true}));
    });
    await until(page, () => !!document.querySelector('.live-views[data-redrawn="1"]'), 30000);
    const json3 = JSON.parse(attn(["multihead", "--queries", "3", "--json", "-"]));
    const doc3 = JSON.parse(attn(["multihead", "--queries", "3", "--explain", "--json", "-"]));
    const t0 = Date.now();
    await hover(page, "example 0 head 4", 2, 2);
    shown = await pathShown(page, "0,3,2,2");
    console.log(`     multihead --queries 3: the path shown ${Date.now() - t0} ms after the hover (a first --explain run)`);
    checkPath("multihead after a control's change", shown, doc3, json3, [0, 3, 2, 2]);
    check("multihead: the new command's --explain run once more", await page.evaluate(() => explainRuns.size) === 2);
    await p.finish();

    // 2. self-attention with additive scoring, causal, valid lengths
    const args = ["selfattn", "--score", "additive", "--tokens", "the cat sat|a dog ran", "--valid-lens", "3,2",
                  "--causal"];
    attn([...args, "--html", "sa.html"]);
    const sjson = JSON.parse(attn([...args, "--json", "-"]));
    const sdoc = JSON.parse(attn([...args, "--explain", "--json", "-"]));
    p = await open(tmp("sa.html"), "cellpath-selfattn-additive");
    page = p.page;
    await hover(page, "example 0 head 1", 2, 1);
    checkPath("selfattn additive hover", await pathShown(page, "0,0,2,1"), sdoc, sjson, [0, 0, 2, 1]);
    await hover(page, "example 0 head 1", 0, 2);
    shown = await pathShown(page, "0,0,0,2");
    checkPath("selfattn additive causal", shown, sdoc, sjson, [0, 0, 0, 2]);
    check("selfattn additive: a key after the query says causal, weight 0",
          /masked \(causal/.test(shown.parts.mask.text) && shown.parts.weight.v[0] === 0, shown.parts.mask.text);
    await hover(page, "example 1 head 1", 2, 2);
    shown = await pathShown(page, "1,0,2,2");
    checkPath("selfattn additive valid_len", shown, sdoc, sjson, [1, 0, 2, 2]);
    check("selfattn additive: key 2 beyond valid_len 2 says so", /masked \(valid_len 2\)/.test(shown.parts.mask.text),
          shown.parts.mask.text);
    // the enlarged panel has its own path beside it
    const pt = await cellPoint(page, "example 1 head 1", 1, 0);
    await page.mouse.click(pt.x, pt.y);
    await page.waitForSelector('canvas[data-panel="example 1 head 1 (enlarged)"]');
    await hover(page, "example 1 head 1 (enlarged)", 1, 0);
    shown = await page.evaluate(() => {
      const a = document.querySelector(".modal aside.cellpath");
      return a ? a.dataset.cell : null;
    });
    await until(page, () => {
      const a = document.querySelector(".modal aside.cellpath");
      return !!a && a.dataset.state === "shown";
    }, 30000);
    check("selfattn additive: the enlarged panel's path shows its cell", shown === "1,0,1,0", shown);
    if (h.SHOTS) await page.screenshot({path: require("path").join(h.SHOTS, "cellpath-enlarged.png")});
    await page.keyboard.press("Escape");
    await p.finish();

    // 3. the tour: step 7's selfattn view has the same path
    attn(["tour", "--out", "t", "--html"]);
    const tdoc = JSON.parse(attn(["selfattn", "--explain", "--json", "-"]));
    const tjson = JSON.parse(attn(["selfattn", "--json", "-"]));
    p = await open(tmp(require("path").join("t", "index.html")), "cellpath-tour");
    page = p.page;
    const argv = await page.evaluate(() => {
      const v = Array.from(document.querySelectorAll(".tour-view")).find((n) =>
        /^explore: attn selfattn --png/.test(n.closest("details").querySelector("summary").textContent));
      v.id = "cp-tour-view";
      return liveArgv({command: v.closest("details").querySelector("summary").textContent.slice(9)});
    });
    check("tour: step 7's view runs attn selfattn", JSON.stringify(argv) === JSON.stringify(["selfattn"]),
          JSON.stringify(argv));
    await hover(page, "example 0 head 2", 1, 0, "#cp-tour-view");
    checkPath("tour selfattn hover", await pathShown(page, "0,1,1,0"), tdoc, tjson, [0, 1, 1, 0]);
    if (h.SHOTS) await (await page.$("#cp-tour-view")).screenshot({path: require("path").join(h.SHOTS, "cellpath-tour-view.png")});
    await p.finish();

    // 4. pool: drag the query along x on the fits; the weights under the
    // curve are --json's row of the test input nearest the pointer
    const pjson = JSON.parse(attn(["pool", "--json", "-"]));
    attn(["pool", "--html", "pool.html"]);
    p = await open(tmp("pool.html"), "cellpath-pool-drag");
    page = p.page;
    const xt = pjson.x_test.flat(), R = pjson.results, last = R.length - 1;
    const at = (j) => page.evaluate((j) => {
      const ch = attnPage.charts.fits;
      ch.canvas.scrollIntoView({block: "center"});
      return ch.pointAt(0, j);
    }, j);
    const start = await at(5), y = start.y;
    await page.mouse.move(start.x, y);
    await page.mouse.down();
    for (const j of [5, 12, 20, 31, 44]) {
      const pt = await at(j);
      await page.mouse.move(pt.x, y, {steps: 4});
      const st = await page.evaluate(() => attnPage.state.pool);
      check(`pool drag: at test input ${j} (x ${xt[j]}) the query follows`, st.test === j && st.dragging !== null,
            `${st.test} ${st.dragging}`);
      check(`pool drag: the weights under the curve are --json's row ${j}`,
            st.weights.length === pjson.x_train.flat().length &&
            st.weights.every((v, i) => v === R[last].attention_weights[j][i]));
    }
    // beyond the canvas's right edge, still held: the last test input
    const box = await page.evaluate(() => attnPage.charts.fits.canvas.getBoundingClientRect().toJSON());
    await page.mouse.move(box.right + 80, y, {steps: 3});
    let st = await page.evaluate(() => attnPage.state.pool);
    check("pool drag: past the right edge, the last test input", st.test === xt.length - 1, st.test);
    await page.mouse.up();
    st = await page.evaluate(() => attnPage.state.pool);
    check("pool drag: let go, the drag ends", st.dragging === null);
    // dragging on the weights chart moves the query too
    const wc = await page.evaluate(() => {
      const c = attnPage.charts.weights.canvas;
      c.scrollIntoView({block: "center"});
      return c.getBoundingClientRect().toJSON();
    });
    await page.mouse.move(wc.left + wc.width * 0.3, wc.top + wc.height / 2);
    await page.mouse.down();
    await page.mouse.move(wc.left + wc.width * 0.6, wc.top + wc.height / 2, {steps: 5});
    await page.mouse.up();
    st = await page.evaluate(() => attnPage.state.pool);
    const xAt = await page.evaluate((cx) => attnPage.charts.weights.xAt(cx), wc.left + wc.width * 0.6);
    let want = 0;
    xt.forEach((x, j) => { if (Math.abs(x - xAt) < Math.abs(xt[want] - xAt)) want = j; });
    check("pool drag on the weights: the query is the test input nearest the pointer", st.test === want &&
          st.weights.every((v, i) => v === R[last].attention_weights[want][i]), `${st.test} vs ${want}`);
    // the keyboard on the fits: → moves one test input
    await page.evaluate(() => attnPage.charts.fits.canvas.focus());
    await page.keyboard.press("ArrowRight");
    st = await page.evaluate(() => attnPage.state.pool);
    check("pool: → on the focused fits moves the query one test input", st.test === Math.min(want + 1, xt.length - 1),
          st.test);
    await p.finish();
  }};
};
