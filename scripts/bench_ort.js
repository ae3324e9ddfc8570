// bench_ort.js — run an ONNX model with onnxruntime-node, CPU execution
// provider, 2 intra-op threads, 1 inter-op thread, every graph
// optimization; called by bench_ort.py.
//
//   node bench_ort.js MODEL X.f32 Y.f32 B,N,D RUNS
//
// X.f32 is the input (B, N, D) as raw little-endian float32; the output of
// the last run is written to Y.f32 the same way. Prints JSON: the version,
// the options, every timed run (ms, after one warm-up) and their median.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, xPath, yPath, dims, runsArg] = process.argv.slice(2);
  const shape = dims.split(',').map(Number);
  const runs = Number(runsArg);
  const buf = fs.readFileSync(xPath);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: 2,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  };
  const session = await ort.InferenceSession.create(model, options);
  const feeds = { X: new ort.Tensor('float32', x, shape) };
  let out = await session.run(feeds); // warm-up: threads started, buffers allocated
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const y = out.Y.data;
  fs.writeFileSync(yPath, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  const sorted = [...times].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  const version = require('onnxruntime-node/package.json').version;
  process.stdout.write(JSON.stringify({
    ort: version, options, runs, times_ms: times, median_ms: median,
    maxrss_mb: process.resourceUsage().maxRSS / 1024,
  }) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
