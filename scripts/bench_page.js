#!/usr/bin/env node
// scripts/bench_page.js — how fast BERT's attention page is drawn: a
// benchmark, not a test (it asserts nothing; scripts/bench calls it).
//
//   node scripts/bench_page.js ATTN [RUNS]
//
// writes `attn multihead --queries 512 --kv 512 --hiddens 768 --heads 12
// --batch 1 --fill random --valid-lens none --html bert.html` into a
// temporary folder with ATTN, opens it RUNS times (7 unless given) from
// file:// in Debian's Chromium (/usr/bin/chromium, driven by
// tests/browser's playwright-core, with tests/browser/run.js's flags and
// viewport, and --enable-precise-memory-info for the heap), each time in a
// fresh context, and prints the CPU, then one line a
// figure, its median, least and greatest:
//
//   bert page: drawn     median 412 ms (min 380, max 520), 7 loads
//
// drawn: navigation → the first screen drawn (the page's data-ready);
// complete: navigation → every view drawn from the whole data
// (data-complete; the same as drawn on a page without a preview); the
// page's size; JSON.parse of its data; the JS heap once complete. Exit 0,
// 1 when a load failed, 2 for a usage error, 77 when Chromium or
// playwright-core is missing.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const {execFileSync} = require("child_process");

const ARGS = ["multihead", "--queries", "512", "--kv", "512", "--hiddens", "768", "--heads", "12", "--batch", "1",
              "--fill", "random", "--valid-lens", "none", "--html", "bert.html"];

if (process.argv.length < 3 || process.argv.length > 4 || !/^[0-9]*$/.test(process.argv[3] || "")) {
  console.error("usage: node scripts/bench_page.js ATTN [RUNS]");
  process.exit(2);
}
const ATTN = path.resolve(process.argv[2]);
const RUNS = Math.max(1, Number(process.argv[3] || 7));
// Debian's chromium and the tests' playwright-core (or exit 77)
const {chromium, CHROMIUM, ARGS: CHROMIUM_ARGS, until} = require(path.join(__dirname, "..", "tests", "browser", "chromium"));
const {cpuName, spread} = require(path.join(__dirname, "bench_common"));

// Whether the page becomes complete within ms: data-complete, or on a
// page from before it, data-ready.
function completed(page, ms) {
  return until(page, () => document.body && (document.body.dataset.complete === "1" ||
    (document.body.dataset.ready === "1" && !document.getElementById("attn-preview"))), ms);
}

function line(what, xs, unit, digits) {
  const {min, median, max} = spread(xs), f = (v) => v.toFixed(digits);
  console.log(`bert page: ${what.padEnd(10)} median ${f(median)} ${unit} (min ${f(min)}, max ${f(max)}), ` +
              `${xs.length} load${xs.length === 1 ? "" : "s"}`);
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "attn-bench-page-"));
  let browser = null, status = 0;
  try {
    execFileSync(ATTN, ARGS, {cwd: dir, stdio: "ignore"});
    const file = path.join(dir, "bert.html"), size = fs.statSync(file).size;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS.concat(["--enable-precise-memory-info"]),
    });
    const drawn = [], complete = [], parse = [], heap = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({viewport: {width: 1280, height: 900}});
      const page = await context.newPage();
      await page.goto("file://" + file);
      if (!(await completed(page, 60000))) {
        console.log(`bert page: load ${i + 1} never completed`);
        status = 1;
        await context.close();
        continue;
      }
      const r = await page.evaluate(() => ({drawn: attnPage.drawMs, complete: attnPage.completeMs,
                                             parse: attnPage.parseMs,
                                             heap: performance.memory ? performance.memory.usedJSHeapSize : NaN}));
      drawn.push(r.drawn);
      complete.push(r.complete !== undefined ? r.complete : r.drawn); // a page from before data-complete
      parse.push(r.parse);
      heap.push(r.heap / (1024 * 1024));
      await context.close();
    }
    console.log(`bert page: cpu ${cpuName()}, ${os.cpus().length} cores, ${RUNS} loads`);
    if (drawn.length) {
      line("drawn", drawn, "ms", 0);
      line("complete", complete, "ms", 0);
      console.log(`bert page: size      ${(size / 1e6).toFixed(1)} MB (${size} bytes)`);
      line("JSON.parse", parse, "ms", 1);
      line("JS heap", heap, "MB", 1);
    }
  } catch (e) {
    console.log("bert page: failed: " + (e.stack || e));
    status = 1;
  } finally {
    if (browser) await browser.close();
    fs.rmSync(dir, {recursive: true, force: true});
  }
  process.exit(status);
}
main();
