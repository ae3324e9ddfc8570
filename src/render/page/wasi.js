// wasi.js — runs attn's WebAssembly module (SPEC.md §14): the few WASI
// calls the C library makes for a program that reads its arguments,
// prints, reads the clock and exits. There is no file system: any file
// attn opens is refused, as a folder that cannot be read is (attn then
// says so, as in a terminal). Each run is a new instance of the compiled
// module, so no run sees another's memory.
//
// Standard input is empty, or opts.stdin (bytes or text): a page's
// translation reads its model there (attn translate --input -).
//
// A run may also ask for the page's data (opts.pageData): the module then
// has ATTN_PAGE_DATA=3 in its environment and descriptor 3 open for
// writing, where --html writes the data a page draws (cmd/page_out.h).
// With opts.onStream(text) as well, it has ATTN_PAGE_STREAM=4 and
// descriptor 4, where a long command (train) writes a JSON line for each
// step as it comes; onStream hears each piece as it is written.
//
// The same text runs in the page, in the page's worker (attnWasiFactory's
// source is the worker's) and in Node (tests/wasm/run.cjs requires it).

function attnWasiFactory() {
  const ERRNO = {SUCCESS: 0, BADF: 8, INVAL: 28, NOSYS: 52, SPIPE: 70, NOTCAPABLE: 76};
  const FILETYPE_UNKNOWN = 0;

  class Exit {
    constructor(code) { this.code = code; }
  }

  // Run module (a WebAssembly.Module) with argv (the words after "attn").
  // opts.onStderr(text), if given, hears standard error as it is written;
  // opts.pageData: descriptor 3 takes the page's data (above). Returns
  // {code, stdout, stderr, pageData} (bytes).
  function run(module, argv, opts = {}) {
    const enc = new TextEncoder();
    const args = ["attn", ...argv].map((a) => enc.encode(String(a) + "\0"));
    const env = opts.pageData ? [enc.encode("ATTN_PAGE_DATA=3\0")] : [];
    const onStream = opts.pageData && opts.onStream;
    if (onStream) env.push(enc.encode("ATTN_PAGE_STREAM=4\0"));
    const onStderr = opts.onStderr;
    const input = typeof opts.stdin === "string" ? enc.encode(opts.stdin) : (opts.stdin || new Uint8Array(0));
    let inputAt = 0;
    const out = [], err = [], data = [];
    const sinks = {1: out, 2: err};
    if (opts.pageData) sinks[3] = data;
    if (onStream) sinks[4] = []; // handed on as written, not kept
    let memory = null;
    const view = () => new DataView(memory.buffer);
    const bytes = (ptr, len) => new Uint8Array(memory.buffer, ptr, len);
    const decoder = new TextDecoder(), streamDecoder = new TextDecoder();
    const t0 = Date.now();
    const perf = typeof performance === "object" ? performance : null;

    const wasi = {
      args_sizes_get(argcPtr, sizePtr) {
        view().setUint32(argcPtr, args.length, true);
        view().setUint32(sizePtr, args.reduce((n, a) => n + a.length, 0), true);
        return ERRNO.SUCCESS;
      },
      args_get(argvPtr, bufPtr) {
        for (const a of args) {
          view().setUint32(argvPtr, bufPtr, true);
          bytes(bufPtr, a.length).set(a);
          argvPtr += 4;
          bufPtr += a.length;
        }
        return ERRNO.SUCCESS;
      },
      environ_sizes_get(countPtr, sizePtr) {
        view().setUint32(countPtr, env.length, true);
        view().setUint32(sizePtr, env.reduce((n, a) => n + a.length, 0), true);
        return ERRNO.SUCCESS;
      },
      environ_get(envPtr, bufPtr) {
        for (const a of env) {
          view().setUint32(envPtr, bufPtr, true);
          bytes(bufPtr, a.length).set(a);
          envPtr += 4;
          bufPtr += a.length;
        }
        return ERRNO.SUCCESS;
      },
      clock_time_get(id, precision, timePtr) {
        // 0: the wall clock; else a monotonic one (ns)
        const ns = id === 0 ? BigInt(t0) * 1000000n
          : BigInt(Math.round((perf ? perf.now() : Date.now() - t0) * 1e6));
        view().setBigUint64(timePtr, ns, true);
        return ERRNO.SUCCESS;
      },
      fd_write(fd, iovs, iovsLen, nPtr) {
        if (!sinks[fd]) return ERRNO.BADF;
        let n = 0;
        for (let i = 0; i < iovsLen; i++) {
          const ptr = view().getUint32(iovs + 8 * i, true);
          const len = view().getUint32(iovs + 8 * i + 4, true);
          const chunk = bytes(ptr, len).slice();
          if (fd === 4) onStream(streamDecoder.decode(chunk, {stream: true}));
          else sinks[fd].push(chunk);
          if (fd === 2 && onStderr) onStderr(decoder.decode(chunk));
          n += len;
        }
        view().setUint32(nPtr, n, true);
        return ERRNO.SUCCESS;
      },
      fd_read(fd, iovs, iovsLen, nPtr) { // standard input: opts.stdin, then its end
        if (fd !== 0) return ERRNO.BADF;
        let n = 0;
        for (let i = 0; i < iovsLen && inputAt < input.length; i++) {
          const ptr = view().getUint32(iovs + 8 * i, true);
          const len = Math.min(view().getUint32(iovs + 8 * i + 4, true), input.length - inputAt);
          bytes(ptr, len).set(input.subarray(inputAt, inputAt + len));
          inputAt += len;
          n += len;
        }
        view().setUint32(nPtr, n, true);
        return ERRNO.SUCCESS;
      },
      fd_fdstat_get(fd, statPtr) { // 0–4: neither a terminal nor a file
        if (fd > 2 && !sinks[fd]) return ERRNO.BADF;
        bytes(statPtr, 24).fill(0);
        view().setUint8(statPtr, FILETYPE_UNKNOWN);
        view().setBigUint64(statPtr + 8, 0xffffffffn, true); // the rights
        view().setBigUint64(statPtr + 16, 0xffffffffn, true);
        return ERRNO.SUCCESS;
      },
      fd_filestat_get(fd, statPtr) {
        if (fd > 2) return ERRNO.BADF;
        bytes(statPtr, 64).fill(0);
        view().setUint8(statPtr + 16, FILETYPE_UNKNOWN);
        return ERRNO.SUCCESS;
      },
      fd_fdstat_set_flags(fd) { return fd > 2 ? ERRNO.BADF : ERRNO.SUCCESS; },
      fd_seek(fd) { return fd > 2 ? ERRNO.BADF : ERRNO.SPIPE; },
      fd_sync(fd) { return fd > 2 ? ERRNO.BADF : ERRNO.SUCCESS; },
      fd_close(fd) { return fd > 2 && !sinks[fd] ? ERRNO.BADF : ERRNO.SUCCESS; },
      fd_prestat_get() { return ERRNO.BADF; }, // no folder is open to the module
      fd_prestat_dir_name() { return ERRNO.BADF; },
      path_open() { return ERRNO.NOTCAPABLE; },
      path_create_directory() { return ERRNO.NOTCAPABLE; },
      path_filestat_get() { return ERRNO.NOTCAPABLE; },
      path_rename() { return ERRNO.NOTCAPABLE; },
      path_unlink_file() { return ERRNO.NOTCAPABLE; },
      sched_yield() { return ERRNO.SUCCESS; },
      proc_exit(code) { throw new Exit(code); },
    };
    // any other call the module may import: not here
    const imports = {wasi_snapshot_preview1: {}};
    for (const imp of WebAssembly.Module.imports(module)) {
      if (imp.module === "wasi_snapshot_preview1")
        imports.wasi_snapshot_preview1[imp.name] = wasi[imp.name] || (() => ERRNO.NOSYS);
    }
    const instance = new WebAssembly.Instance(module, imports);
    memory = instance.exports.memory;
    let code = 0;
    try {
      instance.exports._start();
    } catch (e) {
      if (!(e instanceof Exit)) throw e; // a trap: attn's bug, not the learner's
      code = e.code;
    }
    const join = (parts) => {
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) { all.set(p, at); at += p.length; }
      return all;
    };
    return {code, stdout: join(out), stderr: join(err), pageData: join(data)};
  }

  // The module from its base64 text, gzip-compressed (as the page holds it).
  async function compile(base64) {
    const raw = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const stream = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
    return WebAssembly.compile(await new Response(stream).arrayBuffer());
  }

  // What window.attn.run resolves to: stdout as text; or the Error it
  // rejects with: attn's one line, .code its exit status.
  function settle(result, what = "stdout") {
    const text = new TextDecoder().decode(result[what]);
    if (result.code === 0) return text;
    const e = new Error(new TextDecoder().decode(result.stderr).replace(/\n+$/, ""));
    e.code = result.code;
    e.stdout = text;
    throw e;
  }

  return {run, compile, settle};
}

const attnWasi = attnWasiFactory();
if (typeof module === "object" && module.exports) module.exports = attnWasi;
