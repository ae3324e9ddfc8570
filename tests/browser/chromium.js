// tests/browser/chromium.js — the browser every page check, picture and
// benchmark of attn uses: Debian's /usr/bin/chromium driven by npm's
// playwright-core from tests/browser/node_modules (scripts/test installs
// both; no browser is downloaded), with the flags this machine needs
// (no background networking: the network is closed).
//
//   const {chromium, CHROMIUM, ARGS} = require("./chromium");  // or null, exit 77
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

module.exports = {chromium: chromiumOrSkip(), CHROMIUM, ARGS};
