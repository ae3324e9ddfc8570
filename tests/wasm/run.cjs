#!/usr/bin/env node
// run.cjs MODULE ARG… — run the pages' WebAssembly module (build/attn.wasm)
// as attn ARG… with the pages' own WASI shim (src/render/page/wasi.js):
// what it prints on standard output and error, and its exit status. The
// reproducible catalogue's wasm leg and the tests compare it with the
// attn binary, byte for byte.
"use strict";
const fs = require("fs");
const path = require("path");
const attnWasi = require(path.join(__dirname, "../../src/render/page/wasi.js"));

const [file, ...argv] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: run.cjs MODULE ARG…\n");
  process.exit(2);
}
const wasm = new WebAssembly.Module(fs.readFileSync(file));
const r = attnWasi.run(wasm, argv);
fs.writeSync(1, r.stdout);
fs.writeSync(2, r.stderr);
process.exitCode = r.code;
