// tests/browser/chromium.js — the browser every page check, picture and
// benchmark of attn uses: Debian's /usr/bin/chromium driven by npm's
// playwright-core from tests/browser/node_modules (scripts/test installs
// both; no browser is downloaded), with the flags this machine needs
// (no background networking: the network is closed).
//
//   const {chromium, CHROMIUM, ARGS, until, moveCompound} = require("./chromium");  // or exit 77
"use strict";
const fs = require("fs");
const path = require("path");

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync"];

// playwright-core's chromium, or exit 77 (skipped) saying what is missing
function chromiumOrSkip() {
  let playwright;
  try {
    playwright = require(path.join(__dirname, "node_modules", "playwright-core"));
  } catch (e) {
    console.log("skipped: playwright-core is not installed in tests/browser (scripts/test installs it)");
    process.exit(77);
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.log("skipped: no " + CHROMIUM + " (scripts/test installs Debian's chromium)");
    process.exit(77);
  }
  return playwright.chromium;
}

// Whether fn(arg), evaluated in page every 20 ms, becomes true within ms
// (20 s unless given). Polled: the pages' policy forbids the eval that
// playwright's waitForFunction needs.
async function until(page, fn, ms, arg) {
  const end = Date.now() + (ms || 20000);
  while (Date.now() < end) {
    if (await page.evaluate(fn, arg)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

// Move a page control (live.js) that is more than one field to value:
// the valid lengths' slider per example ("4,1"), or a log slider, by the
// number beside it. False for any other control: the caller fills it.
async function moveCompound(control, value) {
  if (await control.evaluate((c) => c.classList.contains("live-lens"))) {
    await control.evaluate((c, v) => v.split(",").forEach((n, b) => {
      const r = c.querySelector(`[data-attn-example="${b}"]`);
      r.value = n;
      r.dispatchEvent(new Event("input", {bubbles: true}));
    }), value);
    return true;
  }
  if (await control.evaluate((c) => c.classList.contains("live-log"))) {
    await control.evaluate((c, v) => {
      const n = c.parentElement.querySelector(".live-number");
      n.value = v;
      n.dispatchEvent(new Event("input"));
    }, value);
    return true;
  }
  return false;
}

module.exports = {chromium: chromiumOrSkip(), CHROMIUM, ARGS, until, moveCompound};
