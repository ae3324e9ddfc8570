// translatepath: the numbers behind a weight on an `attn translate --all
// --html` page (SPEC §14). Hovering a weight of the cross-attention, the
// encoder's and the decoder's (causal) self-attention shows its path,
// computed by the page's module on the model the page holds (translate
// --input - … --explain --json -, the model text on standard input): every
// number shown equals native `attn translate --explain --json -`'s, and the
// weight equals native --json's. Then a Bahdanau model's page (additive
// score): W_q q, W_k k, tanh and w_v shown too; and a Transformer whose
// every head scores additively (attn train --score additive, translated on
// the reference loops): the same four, w_v the hovered block's.
module.exports = (h) => {
  const {check, attn, tmp, open, hover, until} = h;
  const SENTENCE = "the dog sees a cat .";

  // The aside of view `kind` once it shows cell, as {part: {v, shown, text}}.
  async function pathShown(page, kind, cell) {
    await until(page, ([kind, cell]) => {
      const a = document.querySelector(`.xview[data-view="${kind}"] aside.cellpath`);
      return a && a.dataset.cell === cell && a.dataset.state !== "loading";
    }, 60000, [kind, cell]);
    return page.evaluate((kind) => {
      const a = document.querySelector(`.xview[data-view="${kind}"] aside.cellpath`);
      const parts = {};
      for (const line of a.querySelectorAll(".cp-line"))
        parts[line.dataset.part] = {v: Array.from(line.querySelectorAll(".cp-num"), (n) => Number(n.dataset.v)),
                                    shown: Array.from(line.querySelectorAll(".cp-num"), (n) => n.textContent),
                                    text: line.textContent};
      return {state: a.dataset.state, cell: a.dataset.cell, head: a.querySelector(".cp-head").textContent,
              text: a.textContent, parts};
    }, kind);
  }

  // Hover cell (l, hd, q, k) of kind's panel and check every number shown.
  async function checkCell(page, doc, json, kind, key, l, hd, q, k, panel) {
    panel = panel || `${kind} block ${l + 1} head ${hd + 1}`;
    const name = `translate ${panel} (${q}, ${k})`;
    await hover(page, panel, q, k);
    const shown = await pathShown(page, kind, `${kind}:${l},${hd},${q},${k}`);
    check(`${name}: the path is shown`, shown.state === "shown", `${shown.state} ${shown.text}`);
    const a = doc.explain[kind];
    const want = {q: a.q[l][hd][q], k: a.k[l][hd][k], score: [a.scores[l][hd][q][k]],
                  mask: [a.masked_scores[l][hd][q][k]], row_max: [a.row_max[l][hd][q]],
                  row_sum_exp: [a.row_sum_exp[l][hd][q]], weight: [json[key][l][hd][q][k]],
                  v: a.v[l][hd][k], output: a.head_output[l][hd][q]};
    if (doc.explain.score === "dot") want.scaled = [a.scaled[l][hd][q][k]];
    else Object.assign(want, {qa: a.qa[l][hd][q], ka: a.ka[l][hd][k], tanh: a.tanh[l][hd][q][k],
                              w_v: a.w_v ? a.w_v[l] : doc.explain.w_v});  // a Transformer's: block l's
    check(`${name}: the additive parts shown only for additive scoring`,
          ("qa" in shown.parts) === (doc.explain.score === "additive") &&
          ("scaled" in shown.parts) === (doc.explain.score === "dot"));
    for (const [part, nums] of Object.entries(want)) {
      const got = shown.parts[part];
      check(`${name}: ${part} is native --explain's`, got && got.v.length === nums.length &&
            got.v.every((x, i) => x === nums[i]), `${got && got.v} vs ${nums}`);
    }
    check(`${name}: the weight is native --json's`, shown.parts.weight && shown.parts.weight.v[0] === json[key][l][hd][q][k]);
    check(`${name}: the weight is e^(s − m) / Σ of the numbers shown`, shown.parts.weight &&
          Math.abs(Math.exp(want.mask[0] - want.row_max[0]) / want.row_sum_exp[0] - shown.parts.weight.v[0]) < 1e-5);
    return {shown, masked: a.masked[l][hd][q][k] === 1};
  }

  return {translatepath: async () => {
    attn(["train", "--task", "translate", "--steps", "40", "--layers", "2", "--hiddens", "8", "--heads", "2",
          "--ffn", "16", "--save", "tm.json"]);
    attn(["translate", "--input", "tm.json", "--all", "--html", "tr.html", SENTENCE]);
    const json = JSON.parse(attn(["translate", "--input", "tm.json", "--all", "--json", "-", SENTENCE]));
    const doc = JSON.parse(attn(["translate", "--input", "tm.json", "--all", "--explain", "--json", "-", SENTENCE]));
    const R = json.target.length, S = json.source.length;
    const p = await open(tmp("tr.html"), "translatepath");
    const {page} = p;
    await until(page, () => document.body.dataset.attnReady === "1", 60000);
    const asides = await page.evaluate(() => document.querySelectorAll(".xview[data-view] aside.cellpath").length);
    check("translate page: an aside beside each of the three attentions", asides === 3, asides);

    // the cross-attention: the last block, a middle cell, the <eos> row and column
    const t0 = Date.now();
    await checkCell(page, doc, json, "cross", "cross_attention", 1, 1, Math.min(1, R - 1), 2);
    console.log(`     translate: the first path shown ${Date.now() - t0} ms after the hover (the module's --explain run)`);
    await checkCell(page, doc, json, "cross", "cross_attention", 0, 0, R - 1, S - 1);
    const head = (await pathShown(page, "cross", `cross:0,0,${R - 1},${S - 1}`)).head;
    check("translate cross: the aside names the target and the source word",
          head.includes(`“${json.target[R - 1]}”`) && head.includes(`“${json.source[S - 1]}”`), head);

    // the encoder's self-attention
    await page.click('button[data-show="encoder"]');
    await checkCell(page, doc, json, "encoder", "encoder_attention", 0, 1, 2, S - 1);
    await checkCell(page, doc, json, "encoder", "encoder_attention", 1, 0, S - 1, 0);

    // the decoder's causal self-attention: a key seen, a later key masked
    await page.click('button[data-show="decoder"]');
    const seen = await checkCell(page, doc, json, "decoder", "decoder_attention", 1, 1, R - 1, 0);
    check("translate decoder: key 0 of the last row is not masked", !seen.masked &&
          /not masked/.test(seen.shown.parts.mask.text), seen.shown.parts.mask.text);
    if (R >= 2) {
      const m = await checkCell(page, doc, json, "decoder", "decoder_attention", 0, 0, 0, 1);
      check("translate decoder: a later key is masked (causal), its weight 0 and its score -1e6",
            m.masked && /masked \(causal/.test(m.shown.parts.mask.text) && m.shown.parts.weight.v[0] === 0 &&
            m.shown.parts.mask.v[0] === -1e6, m.shown.parts.mask.text);
    }
    const runs = await page.evaluate(() => explainRuns.size);
    check("translate: --explain run once for the page (every view reads the same document)", runs === 1, runs);
    if (h.SHOTS) {
      await hover(page, "decoder block 1 head 1", 0, 1);
      await pathShown(page, "decoder", "decoder:0,0,0,1");
      await page.screenshot({path: require("path").join(h.SHOTS, "translatepath-hover.png"), fullPage: true});
    }
    await p.finish();

    // a Bahdanau model (additive score): its one attention, the query s(t′−1)
    attn(["train", "--task", "translate", "--arch", "bahdanau", "--steps", "30", "--hiddens", "8", "--save", "bm.json"]);
    attn(["translate", "--input", "bm.json", "--html", "br.html", SENTENCE]);
    const bjson = JSON.parse(attn(["translate", "--input", "bm.json", "--json", "-", SENTENCE]));
    const bdoc = JSON.parse(attn(["translate", "--input", "bm.json", "--explain", "--json", "-", SENTENCE]));
    const b = await open(tmp("br.html"), "translatepath-bahdanau");
    await until(b.page, () => document.body.dataset.attnReady === "1", 60000);
    const bR = bjson.target.length, bS = bjson.source.length;
    const first = await checkCell(b.page, bdoc, bjson, "cross", "cross_attention", 0, 0, 0, 1, "bahdanau attention");
    check("translate bahdanau: the query is named s(t′−1), the context the output",
          /s\(t′−1\) at step 0/.test(first.shown.parts.q.text) && /the context at step 0/.test(first.shown.parts.output.text),
          first.shown.parts.q.text);
    await checkCell(b.page, bdoc, bjson, "cross", "cross_attention", 0, 0, bR - 1, bS - 1, "bahdanau attention");
    if (h.SHOTS) await b.page.screenshot({path: require("path").join(h.SHOTS, "translatepath-bahdanau-hover.png"), fullPage: true});
    await b.finish();

    // a Transformer with additive scores: each block's own w_v
    attn(["train", "--task", "translate", "--score", "additive", "--steps", "20", "--layers", "2", "--hiddens", "8",
          "--heads", "2", "--ffn", "16", "--save", "am.json"]);
    attn(["translate", "--input", "am.json", "--all", "--html", "ar.html", SENTENCE]);
    const ajson = JSON.parse(attn(["translate", "--input", "am.json", "--all", "--json", "-", SENTENCE]));
    const adoc = JSON.parse(attn(["translate", "--input", "am.json", "--all", "--explain", "--json", "-", SENTENCE]));
    const ad = await open(tmp("ar.html"), "translatepath-additive");
    await until(ad.page, () => document.body.dataset.attnReady === "1", 60000);
    const aR = ajson.target.length, aS = ajson.source.length;
    const summary = await ad.page.evaluate(() => document.body.textContent);
    check("translate additive: the page says every head scores additively",
          summary.includes("Every head scores additively, w_v·tanh(W_q q + W_k k)."));
    check("translate additive: the blocks' w_v differ (each block's own is shown)",
          adoc.explain.cross.w_v[0].some((x, i) => x !== adoc.explain.cross.w_v[1][i]));
    const ac = await checkCell(ad.page, adoc, ajson, "cross", "cross_attention", 1, 1, aR - 1, aS - 1);
    check("translate additive: W_q q, W_k k, the tanh and w_v shown, no ÷√p",
          ["qa", "ka", "tanh", "w_v"].every((k) => k in ac.shown.parts) && !("scaled" in ac.shown.parts));
    await ad.page.click('button[data-show="encoder"]');
    await checkCell(ad.page, adoc, ajson, "encoder", "encoder_attention", 0, 0, 1, aS - 1);
    await ad.page.click('button[data-show="decoder"]');
    await checkCell(ad.page, adoc, ajson, "decoder", "decoder_attention", 1, 0, aR - 1, 0);
    await ad.finish();
  }};
};
