// scripts/bench_common.js — what the browser benchmarks (bench_live.js,
// bench_page.js) share: the CPU's name for their first line, and a
// sample's least, median and greatest, the figures they print.
"use strict";
const fs = require("fs");

// /proc/cpuinfo's first model name, or "unknown"
function cpuName() {
  try {
    const m = /^model name\s*:\s*(.*)$/m.exec(fs.readFileSync("/proc/cpuinfo", "utf8"));
    return m ? m[1].trim() : "unknown";
  } catch (e) {
    return "unknown";
  }
}

// {min, median, max} of the numbers xs (not empty); an even count's
// median is the mean of the middle two
function spread(xs) {
  const s = xs.slice().sort((a, b) => a - b), n = s.length;
  return {min: s[0], median: n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, max: s[n - 1]};
}

module.exports = {cpuName, spread};
