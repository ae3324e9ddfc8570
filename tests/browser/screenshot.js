#!/usr/bin/env node
// tests/browser/screenshot.js — a picture of an attn page as Chromium draws
// it, for docs/html/ (scripts/docs_pages), and the page's size and time:
//
//   node tests/browser/screenshot.js PAGE.html OUT.png [--height H]
//        [--hover PANEL ROW COL] [--enlarge PANEL] [--slide INDEX]
//        [--headview-hover ROW] [--toggle-head H]
//        [--panel KEY] [--set OPTION VALUE]…
//
// --height H: the top H pixels (default the whole page); --hover: the
// tooltip of a cell; --enlarge: a panel in its dialog; --slide: a train
// page's slider at that index; --set: the control of OPTION (live.js)
// set to VALUE (a checkbox: on or off), once the page has recomputed
// (each --set in turn); --panel KEY: the tour's panel of controls KEY
// (step-N-run-R) is the one --set moves, and the picture is that run's
// view with its panel. Prints "PAGE: N bytes, drawn in T ms" (the
// time from navigation to the first drawing, the page's own
// performance.now(), best of three loads; a report, never a check).
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const {chromium, CHROMIUM, ARGS, moveCompound} = require("./chromium"); // or exit 77

const argv = process.argv.slice(2);
const [page, out] = argv;
const opt = (name, n) => {
  const i = argv.indexOf(name);
  return i < 0 ? null : argv.slice(i + 1, i + 1 + n);
};

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "attn-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: {width: 1280, height: 900}, args: ARGS,
  });
  const p = await ctx.newPage();
  const errors = [];
  p.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  p.on("pageerror", (e) => errors.push(String(e)));
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    await p.goto("file://" + path.resolve(page));
    // complete: a large page draws its preview first (ready), then every
    // view from its data (complete); the picture is of the finished page
    for (let k = 0; k < 400 && !(await p.evaluate(() => document.body.dataset.complete === "1")); k++)
      await new Promise((r) => setTimeout(r, 50));
    best = Math.min(best, Number(await p.evaluate(() => document.body.dataset.drawMs)));
  }
  const center = (panel, r, c) => p.evaluate(([panel, r, c]) => {
    const cv = document.querySelector(`canvas[data-panel="${panel}"]`);
    const b = cv.getBoundingClientRect();
    return {x: b.left + cv.clientLeft + (c + 0.5) * cv.clientWidth / Number(cv.dataset.cols),
            y: b.top + cv.clientTop + (r + 0.5) * cv.clientHeight / Number(cv.dataset.rows)};
  }, [panel, r, c]);
  const slide = opt("--slide", 1);
  if (slide) {
    await p.focus('input[aria-label="training step"]');
    await p.keyboard.press("Home");
    for (let i = 0; i < Number(slide[0]); i++) await p.keyboard.press("ArrowRight");
    await p.evaluate(() => document.activeElement.blur());
  }
  const toggle = opt("--toggle-head", 1);
  if (toggle) await p.click(`button[data-head="${toggle[0]}"]`);
  const enlarge = opt("--enlarge", 1);
  if (enlarge) await p.click(`canvas[data-panel="${enlarge[0]}"]`);
  const hover = opt("--hover", 3);
  if (hover) {
    const pt = await center(hover[0], Number(hover[1]), Number(hover[2]));
    await p.mouse.move(pt.x, pt.y);
  }
  const hv = opt("--headview-hover", 1);
  if (hv) {
    const pt = await p.evaluate((row) => {
      const c = document.querySelector('canvas[data-view="head view"]');
      c.scrollIntoView({block: "center"});
      const b = c.getBoundingClientRect(), k = b.width / c.width, n = Number(row);
      return {x: b.left + 150 * k, y: b.top + (28 + n * 24 + 12) * k};
    }, hv[0]);
    await p.mouse.move(pt.x, pt.y);
  }
  const key = opt("--panel", 1);
  const scope = key ? `.live[data-key="${key[0]}"]` : ".live";
  if (key && !(await p.$(scope))) throw new Error(`no panel ${key[0]} on ${page}`);
  for (let i = argv.indexOf("--set"); i >= 0; i = argv.indexOf("--set", i + 1)) {
    const [option, value] = argv.slice(i + 1, i + 3);
    const control = await p.$(`${scope} [data-attn-option="${option}"]`);
    if (!control) throw new Error(`no control for ${option} on ${page}`);
    const runs = await p.evaluate((sel) => Number(document.querySelector(sel).dataset.runs || 0), scope);
    if ((await control.getAttribute("type")) === "checkbox") await control.setChecked(value === "on");
    else if ((await control.evaluate((e) => e.tagName)) === "SELECT") await control.selectOption(value);
    else if (!(await moveCompound(control, value))) {
      await control.fill(value);
      await control.dispatchEvent("change");
    }
    for (let k = 0; k < 6000 && (await p.evaluate((sel) => Number(document.querySelector(sel).dataset.runs || 0), scope)) === runs; k++)
      await new Promise((r) => setTimeout(r, 50));
    const status = await p.evaluate((sel) => document.querySelector(sel + " .live-status").textContent, scope);
    if (status) throw new Error(`${option} ${value}: ${status}`);
  }
  // the tour's run: its view and panel (the <details> around them), with a margin
  const box = key && await p.evaluate((sel) => {
    document.activeElement.blur();
    const r = document.querySelector(sel).parentElement.getBoundingClientRect();
    return {x: Math.max(0, r.left + scrollX - 12), y: Math.max(0, r.top + scrollY - 12),
            width: r.width + 24, height: r.height + 24};
  }, scope);
  const height = opt("--height", 1);
  if (height && !hover && !hv && !enlarge) await p.evaluate(() => window.scrollTo(0, 0));
  // the whole page, or its top; a hovered or enlarged state as the
  // viewport shows it (a whole-page capture resizes the view, and the
  // mouse leaves)
  const live = !!(hover || hv || enlarge);
  await p.screenshot({path: out, fullPage: !live,
                      clip: box || (height ? {x: 0, y: 0, width: 1280, height: Number(height[0])} : undefined)});
  const size = fs.statSync(page).size;
  console.log(`${path.basename(page)}: ${size} bytes, drawn in ${best.toFixed(0)} ms` +
              (errors.length ? `; errors: ${errors.join(" | ")}` : ""));
  await ctx.close();
  fs.rmSync(profile, {recursive: true, force: true});
  process.exit(errors.length ? 1 : 0);
})();
