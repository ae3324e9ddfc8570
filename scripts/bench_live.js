#!/usr/bin/env node
// scripts/bench_live.js — the budgets of the pages that recompute (SPEC
// §14), measured: a benchmark, not a test (it asserts nothing;
// `scripts/bench live` calls it).
//
//   node scripts/bench_live.js ATTN [RUNS]
//
// writes the chapter's pages with ATTN into a temporary folder and, in
// Debian's Chromium (tests/browser's playwright-core and flags), each load
// in a fresh context, RUNS times (5 unless given), measures:
//   size      the page's bytes (budget: a chapter cell's page ≤ 1 MB);
//   ready     navigation → the module compiled (window.attn.ready;
//             budget ≤ 0.5 s), and the first drawing's time beside it;
//   recompute the chapter's cell on multihead's page, --heads 2 right
//             after the module is ready, then 4, 1 and 5: the module's
//             rerun and its data read (attnPage.recomputeMs; budget
//             ≤ 50 ms), and from the control's change to the views drawn
//             again and painted (the page's own drawing added);
//   slider    the slider's input event alone to the views drawn again and
//             painted: multihead's --heads (2, 4, 1, 5 of 100 hiddens) and
//             posenc's --dim (16, 48, 32);
//   train     `train --task reverse`, 300 steps, trained in the page's
//             worker after --steps is set to 300 (budget ≤ 5 s);
//   first step the same run's first logged step shown as it streams
//             (the heading "Training: step N of 300" painted), from the
//             control's change.
// Each line: the median, least and greatest, and the budget. Exit 0, 1
// when a load failed, 2 for a usage error, 77 when Chromium or
// playwright-core is missing.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const {execFileSync} = require("child_process");

if (process.argv.length < 3 || process.argv.length > 4 || !/^[0-9]*$/.test(process.argv[3] || "")) {
  console.error("usage: node scripts/bench_live.js ATTN [RUNS]");
  process.exit(2);
}
const ATTN = path.resolve(process.argv[2]);
const RUNS = Math.max(1, Number(process.argv[3] || 5));
const {chromium, CHROMIUM, ARGS: CHROMIUM_ARGS, until} = require(path.join(__dirname, "..", "tests", "browser", "chromium"));
const {cpuName, spread} = require(path.join(__dirname, "bench_common"));

const PAGES = [
  ["multihead", ["multihead", "--html", "multihead.html"]],
  ["selfattn", ["selfattn", "--tokens", "我 爱 吃 苹果", "--html", "selfattn.html"]],
  ["posenc", ["posenc", "--dim", "32", "--steps", "60", "--html", "posenc.html"]],
  ["pool", ["pool", "--html", "pool.html"]],
  ["train", ["train", "--task", "reverse", "--steps", "20", "--html", "train.html"]],
];

function line(what, xs, unit, budget) {
  const {min, median, max} = spread(xs);
  const verdict = budget === undefined ? "" : `, budget ${budget} ${unit}: ${median <= budget ? "within" : "OVER"}`;
  console.log(`live: ${what.padEnd(26)} median ${median.toFixed(0)} ${unit} (min ${min.toFixed(0)}, ` +
              `max ${max.toFixed(0)}), ${xs.length} run${xs.length === 1 ? "" : "s"}${verdict}`);
}

// In the page: set the control of option to value and wait until the
// views are drawn again; the milliseconds from the change to the drawing
async function recompute(page, option, value) {
  return page.evaluate(([opt, v]) => new Promise((resolve, reject) => {
    const panel = document.querySelector(".live");
    const input = document.querySelector(`[data-attn-option="${opt}"]`);
    const runs = Number(panel.dataset.runs || 0);
    const t0 = performance.now();
    input.value = v;
    input.dispatchEvent(new Event("input")); // a number reruns on input, text on change
    input.dispatchEvent(new Event("change"));
    const poll = () => {
      if (Number(panel.dataset.runs || 0) > runs) {
        const err = document.querySelector(".live-status").dataset.error;
        if (err !== undefined) reject(new Error("the rerun failed: " + document.querySelector(".live-status").textContent));
        else requestAnimationFrame(() => resolve(performance.now() - t0));
      } else if (performance.now() - t0 > 120000) reject(new Error("no rerun after 120 s"));
      else setTimeout(poll, 1);
    };
    poll();
  }), [option, value]);
}

// The train page's --steps set to 300: the milliseconds from the change
// to the first streamed step drawn and painted (stream.js), in runs fresh
// contexts; the run is stopped there.
async function firstStep(browser, dir, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({viewport: {width: 1280, height: 900}});
    const page = await context.newPage();
    await page.goto("file://" + path.join(dir, "train.html"));
    await page.evaluate(() => window.attn.ready);
    times.push(await page.evaluate(() => new Promise((resolve, reject) => {
      const input = document.querySelector('[data-attn-option="--steps"]');
      const t0 = performance.now();
      input.value = "300";
      input.dispatchEvent(new Event("input"));
      input.dispatchEvent(new Event("change"));
      const poll = () => {
        const h = document.querySelector("[data-train-view] section.view h2");
        if (h && /^Training: step \d+ of 300/.test(h.textContent))
          requestAnimationFrame(() => {
            resolve(performance.now() - t0);
            const stop = document.querySelector("[data-train-view] .live-stop");
            if (stop) stop.click();
          });
        else if (performance.now() - t0 > 60000) reject(new Error("no step shown after 60 s"));
        else setTimeout(poll, 1);
      };
      poll();
    })));
    await context.close();
  }
  return times;
}

// A slider moved: only its input event (as a drag gives), and the
// milliseconds until the views are drawn again (.live-views' redrawn
// count up) and painted
async function slide(page, option, value) {
  return page.evaluate(([opt, v]) => new Promise((resolve, reject) => {
    const views = () => Number((document.querySelector(".live-views") || {dataset: {}}).dataset.redrawn || 0);
    const input = document.querySelector(`[data-attn-option="${opt}"]`);
    const before = views();
    const t0 = performance.now();
    input.value = v;
    input.dispatchEvent(new Event("input"));
    const poll = () => {
      if (views() > before) requestAnimationFrame(() => resolve(performance.now() - t0));
      else if (document.querySelector(".live-status").dataset.error !== undefined)
        reject(new Error("the rerun failed: " + document.querySelector(".live-status").textContent));
      else if (performance.now() - t0 > 120000) reject(new Error("no redraw after 120 s"));
      else setTimeout(poll, 1);
    };
    poll();
  }), [option, value]);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-bench-live-"));
  let browser = null, status = 0;
  try {
    for (const [, args] of PAGES) execFileSync(ATTN, args, {cwd: dir, stdio: "ignore"});
    browser = await chromium.launch({executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS});
    console.log(`live: cpu ${cpuName()}, ${os.cpus().length} cores, ${RUNS} runs each`);
    for (const [name] of PAGES)
      console.log(`live: size of ${(name + "'s page").padEnd(18)} ${(fs.statSync(path.join(dir, name + ".html")).size / 1024).toFixed(0)} KB` +
                  (name === "train" ? "" : ", budget 1024 KB"));
    const ready = [], drawn = [], first = [], cell = [], module = [], train = [], slid = [], slidPosenc = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({viewport: {width: 1280, height: 900}});
      const page = await context.newPage();
      await page.goto("file://" + path.join(dir, "multihead.html"));
      const ok = await page.evaluate(() => window.attn.ready.then(() => true, () => false));
      if (!ok) throw new Error("the multihead page has no module (an attn built without WebAssembly?)");
      const r = await page.evaluate(() => ({ready: attnPage.moduleMs, drawn: attnPage.drawMs}));
      ready.push(r.ready);
      drawn.push(r.drawn);
      await until(page, () => document.querySelector(".live").dataset.ready === "1", 10000);
      first.push(await recompute(page, "--heads", "2"));
      for (const h of ["4", "1", "5"]) {
        cell.push(await recompute(page, "--heads", h));
        module.push(await page.evaluate(() => attnPage.recomputeMs));
      }
      for (const h of ["2", "4", "1", "5"]) slid.push(await slide(page, "--heads", h));
      await page.goto("file://" + path.join(dir, "posenc.html"));
      await page.evaluate(() => window.attn.ready);
      await until(page, () => document.querySelector(".live").dataset.ready === "1", 10000);
      for (const d of ["16", "48", "32"]) slidPosenc.push(await slide(page, "--dim", d));
      await context.close();
    }
    line("multihead: first drawing", drawn, "ms");
    line("multihead: module ready", ready, "ms", 500);
    line("cell: the module's rerun", module, "ms", 50);
    line("cell: first change to drawn", first, "ms");
    line("cell: later change to drawn", cell, "ms");
    line("slider: multihead --heads", slid, "ms");
    line("slider: posenc --dim", slidPosenc, "ms");
    for (let i = 0; i < Math.min(RUNS, 3); i++) {
      const context = await browser.newContext({viewport: {width: 1280, height: 900}});
      const page = await context.newPage();
      await page.goto("file://" + path.join(dir, "train.html"));
      await page.evaluate(() => window.attn.ready);
      train.push(await recompute(page, "--steps", "300"));
      await context.close();
    }
    line("train reverse, 300 steps", train, "ms", 5000);
    line("train: first step shown", await firstStep(browser, dir, Math.min(RUNS, 3)), "ms");
  } catch (e) {
    console.log("live: failed: " + (e.stack || e));
    status = 1;
  } finally {
    if (browser) await browser.close();
    fs.rmSync(dir, {recursive: true, force: true});
  }
  process.exit(status);
}
main();
