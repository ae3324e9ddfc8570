#!/usr/bin/env node
// run.cjs [--stdin FILE] MODULE ARG… — run the pages' WebAssembly module
// (build/attn.wasm) as attn ARG… with the pages' own WASI shim
// (src/render/page/wasi.js), FILE's bytes as its standard input (else
// none): what it prints on standard output and error, and its exit status. The
// reproducible catalogue's wasm leg and the tests compare it with the
// attn binary, byte for byte.
"use strict";
const fs = require("fs");
const path = require("path");
const attnWasi = require(path.join(__dirname, "../../src/render/page/wasi.js"));

let args = process.argv.slice(2), stdin;
if (args[0] === "--stdin" && args.length > 1) {
  stdin = fs.readFileSync(args[1]);
  args = args.slice(2);
}
const [file, ...argv] = args;
if (!file) {
  process.stderr.write("usage: run.cjs [--stdin FILE] MODULE ARG…\n");
  process.exit(2);
}
const wasm = new WebAssembly.Module(fs.readFileSync(file));
const r = attnWasi.run(wasm, argv, {stdin});
fs.writeSync(1, r.stdout);
fs.writeSync(2, r.stderr);
process.exitCode = r.code;
