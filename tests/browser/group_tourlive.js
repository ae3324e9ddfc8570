// group_tourlive.js — the tour page live from 10.1 (SPEC §14, issue 40):
// the steps of 10.1–10.4 and the √d sweep as views, each printed block
// rerun with its view (the text equals the CLI's for the panel's new
// command, with NO_COLOR), and 苹果's cosine similarity on the page.
const path = require("path");
const {execFileSync} = require("child_process");

module.exports = (h) => {
  const {check, attn, tmp, pageData, open, shellSplit, ATTN, TMP, SHOTS} = h;
  const fs = require("fs");
  // a screenshot of one step's section (with --shots DIR)
  const shot = async (page, step, name) => {
    if (!SHOTS) return;
    fs.mkdirSync(SHOTS, {recursive: true});
    const sec = await page.$(`section[data-step="${step}"]`);
    await sec.screenshot({path: path.join(SHOTS, name + ".png")});
  };
  // what `attn ARGS` prints for a person, natively, without colour
  const nativeText = (args) => execFileSync(ATTN, args, {cwd: TMP, encoding: "utf8", maxBuffer: 1 << 26,
    env: Object.assign({}, process.env, {NO_COLOR: "1", COLUMNS: "80"})});
  const {until, moveCompound} = require("./chromium"); // polls with evaluate: the page's CSP allows no eval
  // the printed block above a view, its "$" line and its state
  const block = (page, step, run) => page.evaluate(([st, r]) => {
    const sec = document.querySelector(`section[data-step="${st}"]`);
    const outs = Array.from(sec.querySelectorAll(":scope > pre.output"));
    const cmds = Array.from(sec.querySelectorAll(":scope > pre.cmdline"));
    const o = outs[r];
    return {text: o.textContent, reruns: Number(o.dataset.reruns || 0), error: o.dataset.error,
            command: o.dataset.command, cmd: cmds[r].textContent,
            panel: sec.querySelector(".live") ? sec.querySelector(".live .attn-command").textContent : null};
  }, [step, run]);
  // set a control of a step's panel and wait for its block's rerun
  async function change(page, step, option, value, run = 0) {
    const sel = `section[data-step="${step}"] .live [data-attn-option="${option}"]`;
    const before = (await block(page, step, run)).reruns;
    const c = await page.$(sel);
    const tag = await c.evaluate((e) => e.tagName + (e.type || ""));
    if (tag === "SELECTselect-one") await c.selectOption(value);
    else if (tag === "INPUTcheckbox") await (value ? c.check() : c.uncheck());
    else if (!(await moveCompound(c, value))) { await c.fill(value); await c.dispatchEvent("input"); await c.dispatchEvent("change"); }
    const done = await until(page, ([st, r, n]) => {
      const o = document.querySelectorAll(`section[data-step="${st}"] > pre.output`)[r];
      return Number(o.dataset.reruns || 0) > n;
    }, 300000, [step, run, before]);
    const status = await page.evaluate((st) => document.querySelector(`section[data-step="${st}"] .live-status`).textContent, step);
    check(`tourlive: ${step}'s ${option} reruns its printed block`, done, status);
    return block(page, step, run);
  }
  return {
    tourlive: async () => {
      attn(["tour", "--out", "t", "--html"]);
      const file = tmp(path.join("t", "index.html"));
      const {data} = pageData(file);
      const names = data.steps.map((s) => s.name);
      check("tourlive: the chapter's order, 10.5 before 10.7's cross-attention, the sweep after 10.3",
            names.join(" ") === "cues pooling scoring scaling bahdanau multihead selfattn context complexity order " +
            "posenc binary relative rope learned circuits cross vit", names.join(" "));
      check("tourlive: one numbering, the zh edition's", data.steps.every((s) => !/d2l 1[01]/.test(s.where)) &&
            data.steps[3].where === "zh 10.3.3" && data.steps[16].where.startsWith("zh 10.7.5"),
            data.steps.map((s) => s.where).join(" | "));
      const p = await open(file, "tour");
      const {page} = p;
      const ok = await page.evaluate(() => window.attn.ready.then(() => true, (e) => e.message));
      check("tourlive: window.attn.ready", ok === true, ok);
      // steps 1–5 have live panels (the sweep: its chart view), and 17 too
      const live = await page.evaluate(() => Array.from(document.querySelectorAll("section.tour-step"), (s) => ({
        step: s.dataset.step, views: Array.from(s.querySelectorAll(".tour-view"), (v) => v.dataset.kind),
        panels: s.querySelectorAll(".live").length})));
      const kinds = Object.fromEntries(live.map((s) => [s.step, s.views.join(",")]));
      check("tourlive: steps 1–5 and cross are views of their own kinds",
            kinds.cues === "attention" && kinds.pooling === "pool" && kinds.scoring === "attention" &&
            kinds.scaling === "scale_sweep" && kinds.bahdanau === "translate" && kinds.cross === "translate", JSON.stringify(kinds));
      check("tourlive: steps 1–3, 5 and cross have a panel of controls",
            ["cues", "pooling", "scoring", "bahdanau", "cross"].every((n) => live.find((s) => s.step === n).panels === 1),
            JSON.stringify(live.map((s) => s.panels)));
      const charts = await page.evaluate(() => Array.from(document.querySelectorAll('section[data-step="scaling"] [data-chart]'), (c) => c.dataset.chart));
      check("tourlive: the sweep's two charts", charts.join(",") === "largest-weight,variance", charts.join(","));
      for (const st of ["pooling", "scoring", "scaling", "context"]) await shot(page, st, "tourlive-before-" + st);

      // 苹果: new tokens; the block = the CLI's text for the new command, the cosine updated
      const ctx0 = await block(page, "context", 0);
      check("tourlive: 苹果's block shows its cosine similarity", /苹果: input 1\.0000 \(the same embedding\), output -?\d\.\d{4}/.test(ctx0.text),
            ctx0.text.slice(-200));
      const ctx = await change(page, "context", "--tokens", "苹果 很 甜|苹果 公司 发布 手机");
      const argv = shellSplit(ctx.panel).slice(1);
      const want = nativeText(argv);
      check("tourlive: context's new command", ctx.panel === "attn selfattn --hiddens 16 --heads 2 --tokens '苹果 很 甜|苹果 公司 发布 手机'" &&
            ctx.cmd === "$ " + ctx.panel && ctx.command === ctx.panel, JSON.stringify([ctx.panel, ctx.cmd]));
      check("tourlive: context's block equals the CLI's text for the new command (NO_COLOR)",
            ctx.text === want && ctx.error === undefined, `${ctx.text.length} vs ${want.length} chars`);
      const cos = (t) => { const m = /苹果: input [0-9.]+ \(the same embedding\), output (-?[0-9.]+)/.exec(t); return m && m[1]; };
      const doc = JSON.parse(execFileSync(ATTN, [...argv, "--json", "-"], {cwd: TMP, encoding: "utf8"}));
      check("tourlive: the cosine on the page changed with the tokens, as --json's same_tokens",
            cos(ctx.text) !== cos(ctx0.text) && Math.abs(Number(cos(ctx.text)) - doc.same_tokens[0].output_cosine) < 5e-5,
            `${cos(ctx0.text)} → ${cos(ctx.text)}, json ${doc.same_tokens[0].output_cosine}`);
      // pool: a control reruns its block
      const pool0 = await block(page, "pooling", 0);
      const pool = await change(page, "pooling", "--epochs", "2");
      check("tourlive: pooling's block equals the CLI's text for its new command",
            pool.text === nativeText(shellSplit(pool.panel).slice(1)) && pool.text !== pool0.text &&
            /--epochs 2/.test(pool.cmd), JSON.stringify([pool.cmd, pool.text.slice(0, 120)]));
      // score: its second run's block (the first, --masked-softmax, has no view and stays)
      const sc0 = await block(page, "scoring", 0);
      const sc = await change(page, "scoring", "--valid-lens", "1,4", 1);
      const sc1 = await block(page, "scoring", 0);
      check("tourlive: scoring's view block equals the CLI's text for its new command, the other block stays",
            sc.text === nativeText(shellSplit(sc.panel).slice(1)) && /--valid-lens 1,4/.test(sc.cmd) &&
            sc1.text === sc0.text && sc1.reruns === 0, JSON.stringify([sc.cmd, sc.text.slice(0, 120)]));
      // a refused value: the view stays, and so does its block; the panel says attn's line
      const panelRuns = () => page.evaluate(() => Number(document.querySelector('section[data-step="scoring"] .live').dataset.runs || 0));
      const runs0 = await panelRuns();
      const vl = await page.$('section[data-step="scoring"] .live [data-attn-option="--seed"]');
      await vl.fill("-5");
      await vl.dispatchEvent("input");
      await vl.dispatchEvent("change");
      await until(page, (n) => Number(document.querySelector('section[data-step="scoring"] .live').dataset.runs || 0) > n, 60000, runs0);
      const bad = await block(page, "scoring", 1);
      const status = await page.evaluate(() => document.querySelector('section[data-step="scoring"] .live-status').textContent);
      check("tourlive: a refused value keeps the view and its block, the panel says attn's line",
            bad.text === sc.text && bad.reruns === sc.reruns &&
            status === "attn score: --seed: expected an integer from 0 to 2147483647, got '-5'", JSON.stringify([status, bad.reruns]));
      // a training step (Bahdanau): the block reruns in a worker, the CLI's text
      const bd = await change(page, "bahdanau", "--steps", "20");
      // the one measured time ("20 steps in 0.05 s") masked, as scripts/reproducible does
      const untimed = (t) => t.replace(/(\d+ steps in )\d+\.\d+ s\b/, "$1<masked> s");
      const bdWant = nativeText(shellSplit(bd.panel).slice(1));
      check("tourlive: bahdanau's block equals the CLI's text for --steps 20 (its time masked)",
            /--steps 20/.test(bd.cmd) && untimed(bd.text) === untimed(bdWant) && /20 steps in <masked> s/.test(untimed(bd.text)),
            JSON.stringify([bd.cmd, bd.text.slice(0, 160), bdWant.slice(0, 160)]));
      for (const st of ["pooling", "scoring", "context", "bahdanau"]) await shot(page, st, "tourlive-after-" + st);
      await p.finish();
    },
  };
};
