#!/usr/bin/env node
// tests/browser/run.js — attn's --html pages checked in a real browser:
// Debian's Chromium (/usr/bin/chromium) driven by npm's playwright-core,
// both installed by scripts/test (tests/browser/package-lock.json pins
// playwright-core; no browser is downloaded).
//
//   node tests/browser/run.js ATTN GROUP [--shots DIR]
//
// GROUP is one kind of page (attention, security, bert, posenc,
// complexity, pool, train, translate, tour); each writes its pages with ATTN into a
// temporary folder, opens them from file:// and checks what a learner
// would do: hover, click, keys, the slider. Every page must load with no
// console error and no request but the file itself. --shots DIR also
// saves a screenshot of each page there. Exit 0 when every check passed,
// 1 otherwise, 77 (skipped) when Chromium or playwright-core is missing.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const {execFileSync} = require("child_process");

const {chromium, CHROMIUM, ARGS: CHROMIUM_ARGS, until, moveCompound} = require("./chromium"); // or exit 77

const ATTN = path.resolve(process.argv[2]), GROUP = process.argv[3];
const shotsAt = process.argv.indexOf("--shots");
const SHOTS = shotsAt > 0 ? path.resolve(process.argv[shotsAt + 1]) : null;
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "attn-browser-"));

// ---- checks --------------------------------------------------------------

let count = 0;
const failed = [];
function check(name, ok, detail) {
  count++;
  if (!ok) {
    failed.push(name);
    console.log("FAIL " + name + (detail !== undefined ? ": " + detail : ""));
  } else {
    console.log("ok   " + name);
  }
}
function near(a, b, tol) {
  return Math.abs(a - b) <= tol;
}

// Run attn with args in TMP; its stdout.
function attn(args, opts) {
  try {
    return execFileSync(ATTN, args, {cwd: TMP, encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"],
                                     env: Object.assign({}, process.env, {NO_COLOR: "1"}), ...(opts || {})});
  } catch (e) {
    throw new Error(`attn ${args.join(" ")} failed: ${e.stderr}`);
  }
}
function tmp(name) {
  return path.join(TMP, name);
}
function readJSON(name) {
  return JSON.parse(fs.readFileSync(tmp(name), "utf8"));
}
// The data element of a page, parsed, and its raw text.
function pageData(file) {
  const html = fs.readFileSync(file, "utf8");
  const m = /<script type="application\/json" id="attn-data">([\s\S]*?)<\/script>/.exec(html);
  return {html, raw: m[1], data: JSON.parse(m[1])};
}
// A float32 tensor of the page's data (base64) or of --json (nested arrays).
function flat(v) {
  if (v && v.base64 !== undefined) {
    const b = Buffer.from(v.base64, "base64");
    const out = new Float32Array(b.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(4 * i);
    return out;
  }
  return Float32Array.from(v.flat(Infinity));
}

// A page's size without attn's module (SPEC §14: the module is the same
// in every page), and whether it has one.
function sizeWithoutModule(file) {
  const html = fs.readFileSync(file, "utf8");
  const m = /<script type="application\/octet-stream" id="attn-module"[^>]*>[^<]*<\/script>/.exec(html);
  return Buffer.byteLength(html) - (m ? Buffer.byteLength(m[0]) : 0);
}
function scriptCount(html) {
  return 2 + (html.includes('id="attn-module"') ? 1 : 0);
}

// ---- the browser -----------------------------------------------------------

// A fresh profile each run (playwright passes it as --user-data-dir).
let browser;
async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "attn-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: {width: 1280, height: 900},
    args: CHROMIUM_ARGS,
  });
  return profile;
}

// Open file in a new page: the page, and its console errors and requests
// (every one but the file itself is a failure). Waits until the page is
// drawn (data-ready) and then complete (data-complete: a large page is
// drawn first from its preview, then from its data), unless opts.drawnOnly.
async function open(file, name, opts) {
  const page = await browser.newPage();
  const errors = [], requests = [];
  const url = "file://" + file;
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  // a blob: URL is the page's own memory (the training worker's script)
  page.on("request", (r) => { if (r.url() !== url && !r.url().startsWith("blob:")) requests.push(r.url()); });
  await page.goto(url);
  if (!(await until(page, () => document.body.dataset.ready === "1"))) errors.push("the page never finished drawing");
  if (!(opts && opts.drawnOnly) && !(await until(page, () => document.body.dataset.complete === "1", 60000)))
    errors.push("the page never completed");
  const p = {page, errors, requests, name};
  p.finish = async () => {
    check(`${name}: no console error`, errors.length === 0, errors.join(" | "));
    check(`${name}: no request but the file`, requests.length === 0, requests.join(" "));
    if (SHOTS) {
      fs.mkdirSync(SHOTS, {recursive: true});
      await page.mouse.move(0, 0);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({path: path.join(SHOTS, name + ".png"), fullPage: true});
    }
    await page.close();
  };
  return p;
}

// The centre of cell (r, c) of the canvas named panel (the first inside
// the element within, a selector, when given), in page pixels.
async function cellPoint(page, panel, r, c, within) {
  return page.evaluate(([panel, r, c, within]) => {
    const cv = (within ? document.querySelector(within) : document).querySelector(`canvas[data-panel="${panel}"]`);
    cv.scrollIntoView({block: "center"});
    const b = cv.getBoundingClientRect(); // the border is outside the cells
    const rows = Number(cv.dataset.rows), cols = Number(cv.dataset.cols);
    return {x: b.left + cv.clientLeft + (c + 0.5) * cv.clientWidth / cols,
            y: b.top + cv.clientTop + (r + 0.5) * cv.clientHeight / rows};
  }, [panel, r, c, within || null]);
}
async function hover(page, panel, r, c, within) {
  const pt = await cellPoint(page, panel, r, c, within);
  await page.mouse.move(pt.x, pt.y);
  return page.evaluate(() => {
    const t = document.querySelector('[role="tooltip"]');
    return t && !t.hidden ? t.textContent : "";
  });
}
async function tooltipText(page) {
  return page.evaluate(() => {
    const t = document.querySelector('[role="tooltip"]');
    return t && !t.hidden ? t.textContent : "";
  });
}
// The weight a tooltip shows: its 4 decimals and its float32 text.
function tooltipWeight(text) {
  const m = /weight (-?[0-9.]+)\s+(?:\()?float32 ([-0-9.e+]+)/.exec(text);
  return m ? {four: m[1], full: Number(m[2])} : null;
}
// The hovered weight against the --json value w.
function checkWeight(name, text, w) {
  const t = tooltipWeight(text);
  check(`${name}: tooltip shows the weight with 4 decimals`, t && t.four === w.toFixed(4),
        `${text} vs ${w}`);
  check(`${name}: tooltip shows the float32 value`, t && Math.fround(t.full) === Math.fround(w),
        `${text} vs ${w}`);
}

// ---- the groups --------------------------------------------------------------

const groups = {};

// multihead's chapter cell: hover against --json, masks, enlarge, keys, head view.
groups.attention = async () => {
  attn(["multihead", "--json", "mh.json", "--html", "mh.html"]);
  const json = readJSON("mh.json");
  const W = json.attention_weights; // (2, 5, 4, 6)
  const file = tmp("mh.html");
  check("attention: the chapter's page is under 176 KB without attn's module (its words in two languages), 1 MB with it", sizeWithoutModule(file) < 176 * 1024 && fs.statSync(file).size < 1024 * 1024,
        fs.statSync(file).size);
  const again = attn(["multihead", "--html", "mh.html"]) && fs.readFileSync(file);
  check("attention: the same command gives the same bytes", Buffer.compare(again, fs.readFileSync(file)) === 0);
  const {data} = pageData(file);
  for (const k of Object.keys(json))
    check(`attention: the page's data has --json's key ${k}`, k in data);
  const p = await open(file, "multihead");
  const {page} = p;
  const panels = await page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("attention: one canvas per example and head", panels.length === 10 && panels[0] === "example 0 head 1" &&
        panels[9] === "example 1 head 5", panels.join(", "));
  for (const [b, h, q, k] of [[0, 0, 0, 0], [0, 3, 2, 1], [1, 4, 3, 1], [1, 1, 0, 0]]) {
    const text = await hover(page, `example ${b} head ${h + 1}`, q, k);
    check(`attention: hover example ${b} head ${h + 1} names query ${q} and key ${k}`,
          text.includes(`query ${q} “${q}” → key ${k} “${k}”`), text);
    checkWeight(`attention: example ${b} head ${h + 1} (${q}, ${k})`, text, W[b][h][q][k]);
    check(`attention: a valid key is not called masked (${b}, ${h}, ${q}, ${k})`, !text.includes("masked"), text);
  }
  // masked keys: valid_lens 3, 2
  const masked = await hover(page, "example 1 head 2", 1, 4);
  check("attention: a key past valid_len is shown as masked", masked.includes("masked (valid_len 2)"), masked);
  checkWeight("attention: masked cell", masked, W[1][1][1][4]);
  const px = await page.evaluate(() => {
    const c = document.querySelector('canvas[data-panel="example 1 head 2"]');
    const cell = c.width / 6;
    return [attnPage.pixelAt(c, Math.floor(4.5 * cell), Math.floor(1.5 * cell)),
            attnPage.pixelAt(c, Math.floor(0.5 * cell), Math.floor(1.5 * cell))];
  });
  check("attention: a masked cell is drawn grey, not in the colour map's red",
        px[0][0] === px[0][1] && px[0][1] === px[0][2] && px[1][0] > px[1][2] + 50, JSON.stringify(px));

  // keyboard: focus a panel, move the highlighted cell
  await page.click('canvas[data-panel="example 0 head 3"]', {position: {x: 2, y: 2}});
  check("attention: clicking a panel enlarges it",
        await page.evaluate(() => !!document.querySelector('[role="dialog"] canvas[data-panel="example 0 head 3 (enlarged)"]')));
  const big = await hover(page, "example 0 head 3 (enlarged)", 2, 1);
  checkWeight("attention: hover in the enlarged panel", big, W[0][2][2][1]);
  await page.keyboard.press("Escape");
  check("attention: Esc closes the enlarged panel", await page.evaluate(() => !document.querySelector('[role="dialog"]')));
  await page.focus('canvas[data-panel="example 1 head 4"]');
  for (const key of ["ArrowDown", "ArrowRight", "ArrowRight", "ArrowDown", "ArrowDown", "ArrowLeft"]) await page.keyboard.press(key);
  const sel = await page.evaluate(() => attnPage.state.selected);
  // the first key selects (0, 0); then right, right, down, down, left
  check("attention: the arrow keys move the highlighted cell", sel && sel.panel === "example 1 head 4" &&
        sel.row === 2 && sel.col === 1, JSON.stringify(sel));
  checkWeight("attention: the keyboard's cell", await tooltipText(page), W[1][3][2][1]);

  // head view: toggle a head by its colour, hover a token
  const before = await page.evaluate(() => document.querySelector('canvas[data-view="head view"]').toDataURL());
  await page.click('button[data-head="2"]');
  const st = await page.evaluate(() => attnPage.state.headView);
  check("attention: clicking head 2's colour hides it", st.heads[1] === false && st.heads[0] === true, JSON.stringify(st));
  check("attention: the swatch says it is off", await page.getAttribute('button[data-head="2"]', "aria-pressed") === "false");
  const after = await page.evaluate(() => document.querySelector('canvas[data-view="head view"]').toDataURL());
  check("attention: the head view is drawn again without head 2", before !== after);
  await page.click('button[data-head="2"]');
  check("attention: clicking again shows it", (await page.evaluate(() => attnPage.state.headView.heads[1])) === true);
  const hvBox = await page.evaluate(() => { const c = document.querySelector('canvas[data-view="head view"]');
    c.scrollIntoView(); const b = c.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, k: b.width / c.width}; });
  await page.mouse.move(hvBox.x + 150 * hvBox.k, hvBox.y + (28 + 2 * 24 + 12) * hvBox.k); // query 2
  const focus = await page.evaluate(() => attnPage.state.headView.focus);
  check("attention: hovering a query token shows only its lines", focus && focus.side === "q" && focus.i === 2,
        JSON.stringify(focus));
  await p.finish();

  // selfattn --permute: A(X), A(π·X) and π·A(X)·πᵀ
  attn(["selfattn", "--permute", "--tokens", "我 爱 吃 苹果", "--hiddens", "16", "--heads", "2", "--permutation", "2,1,0,3",
        "--json", "perm.json", "--html", "perm.html"]);
  const pj = readJSON("perm.json"), A = pj.attention_weights[0], AP = pj.attention_weights_permuted[0], perm = pj.permutation;
  const q = await open(tmp("perm.html"), "permute");
  const names = await q.page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("permute: three rows of panels", names.length === 6 && names[0] === "A(X) example 0 head 1" &&
        names[2] === "A(π·X) example 0 head 1" && names[4] === "π·A(X)·πᵀ example 0 head 1", names.join(", "));
  const t1 = await hover(q.page, "A(π·X) example 0 head 2", 0, 3);
  check("permute: A(π·X)'s tokens are permuted", t1.includes("query 0 “吃” → key 3 “苹果”"), t1);
  checkWeight("permute: A(π·X)", t1, AP[1][0][3]);
  const t2 = await hover(q.page, "π·A(X)·πᵀ example 0 head 1", 1, 2);
  checkWeight("permute: π·A(X)·πᵀ[1][2] = A[π(1)][π(2)]", t2, A[0][perm[1]][perm[2]]);
  const t3 = await hover(q.page, "A(X) example 0 head 1", 3, 0);
  checkWeight("permute: A(X)", t3, A[0][3][0]);
  await q.finish();
};

// Tokens that would run as HTML are text: shown, never run; and the data
// element keeps them whole.
const EVIL = ["</script><img src=x onerror=window.__pwned=1>", "\"><svg onload=window.__pwned=2>",
              "<!-- a comment", "a\u2028b\u2029c & d", "'; window.__pwned=3; '"];
groups.security = async () => {
  const n = EVIL.length;
  const q = EVIL.map((_, i) => [i, 1 - i, 0.5 * i, 1]);
  fs.writeFileSync(tmp("evil.json"), JSON.stringify({queries: q, num_heads: 2, query_tokens: EVIL, key_tokens: EVIL}));
  attn(["multihead", "--input", "evil.json", "--hiddens", "4", "--heads", "2", "--html", "evil.html"]);
  const {html, raw, data} = pageData(tmp("evil.html"));
  check("security: the data element holds no '<', '>' or '&'", !/[<>&]/.test(raw));
  check("security: the data element holds no raw U+2028 or U+2029", !/[\u2028\u2029]/.test(raw));
  check("security: exactly two script elements (and attn's module)", (html.match(/<script/g) || []).length === scriptCount(html));
  check("security: the tokens parse back the same", JSON.stringify(data.page.rows[0].query_tokens) === JSON.stringify(EVIL),
        JSON.stringify(data.page.rows[0].query_tokens));
  check("security: a Content-Security-Policy forbids remote loads",
        /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/.test(html));
  const p = await open(tmp("evil.html"), "security");
  const {page} = p;
  await page.waitForTimeout(200);
  check("security: no handler ran", (await page.evaluate(() => window.__pwned)) === undefined);
  check("security: no img or svg element was made", (await page.evaluate(() => document.querySelectorAll("img, svg").length)) === 0);
  const ticks = await page.evaluate(() => Array.from(document.querySelectorAll('.hm-yt')[0].querySelectorAll(".tick"), (t) => t.textContent));
  check("security: the tokens are shown as text", JSON.stringify(ticks) === JSON.stringify(EVIL), JSON.stringify(ticks));
  const visible = await page.evaluate(() => { const t = document.querySelector(".hm-yt .tick"); const b = t.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && getComputedStyle(t).visibility === "visible"; });
  check("security: the tokens are visible", visible);
  const text = await hover(page, "example 0 head 1", 0, 1);
  check("security: the tooltip shows the token as text", text.includes(EVIL[0]) && text.includes(EVIL[1]), text);
  check("security: still no handler ran", (await page.evaluate(() => window.__pwned)) === undefined);
  await p.finish();

  // the same tokens as a training set's: the train page's labels
  const seqs = [EVIL, EVIL.slice().reverse(), EVIL.slice(1).concat(EVIL.slice(0, 1))];
  fs.writeFileSync(tmp("evil-data.json"), JSON.stringify({sequences: seqs, targets: seqs.map((q) => q.slice().reverse())}));
  attn(["train", "--data", "evil-data.json", "--steps", "5", "--log-every", "1", "--html", "evil-train.html"]);
  const probe = pageData(tmp("evil-train.html")).data.page.runs[0].probes[0].tokens;
  const tq = await open(tmp("evil-train.html"), "security-train");
  await tq.page.waitForTimeout(200);
  check("security: train, no handler ran", (await tq.page.evaluate(() => window.__pwned)) === undefined);
  check("security: train, no img or svg element", (await tq.page.evaluate(() => document.querySelectorAll("img, svg").length)) === 0);
  const tt = await tq.page.evaluate(() => Array.from(document.querySelectorAll(".hm-xt")[0].querySelectorAll(".tick"), (t) => t.textContent));
  check("security: train, the tokens are shown as text", JSON.stringify(tt) === JSON.stringify(probe) &&
        probe.every((t) => EVIL.includes(t)), JSON.stringify(tt));
  await slideTo(tq.page, 3);
  const th = await hover(tq.page, "layer 1 head 1", 0, 1);
  check("security: train, the tooltip shows them as text", th.includes(probe[0]) && th.includes(probe[1]), th);
  check("security: train, still no handler ran", (await tq.page.evaluate(() => window.__pwned)) === undefined);
  await tq.finish();
};

// The colour-map entry of v (matplotlib's rule, the page's paintHeatmap).
function entryOf(v, vmin, vmax) {
  const t = (v - vmin) / (vmax > vmin ? vmax - vmin : 1);
  return !(t > 0) ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
}
// The area mean of panel (rows × cols, at W[off …]) over the pixel (y, x)
// of a ph × pw thumbnail: each cell weighted by the part of it inside.
function areaMean(W, off, rows, cols, ph, pw, y, x) {
  const y0 = y * rows / ph, y1 = (y + 1) * rows / ph, x0 = x * cols / pw, x1 = (x + 1) * cols / pw;
  let sum = 0;
  for (let r = Math.floor(y0); r < y1 && r < rows; r++)
    for (let c = Math.floor(x0); c < x1 && c < cols; c++)
      sum += (Math.min(r + 1, y1) - Math.max(r, y0)) * (Math.min(c + 1, x1) - Math.max(c, x0)) * W[off + r * cols + c];
  return sum / ((y1 - y0) * (x1 - x0));
}
// Whether pixel i of px (RGBA bytes) has the colour of entry e of the
// page's colour map ("rrggbb" × 256).
function hasEntry(cmap, px, i, e) {
  return e >= 0 && e < 256 && parseInt(cmap.lut.substr(6 * e, 6), 16) === (px[4 * i] << 16 | px[4 * i + 1] << 8 | px[4 * i + 2]) &&
         px[4 * i + 3] === 255;
}
// The RGBA pixels of the canvas named panel, with its sizes.
async function canvasPixels(page, panel) {
  return page.evaluate((panel) => {
    const c = document.querySelector(`canvas[data-panel="${panel}"]`);
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    return {width: c.width, height: c.height, clientWidth: c.clientWidth, clientHeight: c.clientHeight,
            dpr: window.devicePixelRatio, px: Array.from(d)};
  }, panel);
}

// BERT's size: 1 × 512 tokens, 12 heads, under 20 MB; drawn first from its
// preview (12 grids of 128 × 128 block means, before the script), then
// from its data (after the script): thumbnails at their displayed size,
// each pixel the area mean of its weights, every weight on hover.
groups.bert = async () => {
  attn(["multihead", "--queries", "512", "--kv", "512", "--hiddens", "768", "--heads", "12", "--batch", "1",
        "--fill", "random", "--valid-lens", "none", "--json", "bert.json", "--html", "bert.html"]);
  const size = fs.statSync(tmp("bert.html")).size;
  console.log(`bert: page ${(size / 1e6).toFixed(1)} MB`);
  check("bert: the page is under 20 MB", size < 20e6, size);
  const {html, data} = pageData(tmp("bert.html"));
  const W = flat(data.attention_weights);
  const J = flat(readJSON("bert.json").attention_weights);
  check("bert: the page's weights are --json's", J.length === W.length && J.every((v, i) => Math.fround(v) === W[i]));
  const at = (h, q, k) => W[(h * 512 + q) * 512 + k];
  const cmap = data.page.cmap;

  // the preview: before the script, the data after it
  const pm = /<script type="application\/json" id="attn-preview">([\s\S]*?)<\/script>/.exec(html);
  const order = ['id="attn-preview"', "<script>\n", 'id="attn-data"'].map((t) => html.indexOf(t));
  check("bert: the preview, the script, then the data", pm && order[0] > 0 && order[0] < order[1] && order[1] < order[2],
        JSON.stringify(order));
  const pv = JSON.parse(pm[1]);
  check("bert: the preview's page is the data's", JSON.stringify(pv.page) === JSON.stringify(data.page));
  let jmin = Infinity, jmax = -Infinity;
  for (const v of J) { jmin = Math.min(jmin, v); jmax = Math.max(jmax, v); }
  check("bert: the preview's vmin is the least --json weight", Math.fround(pv.preview.vmin) === Math.fround(jmin),
        `${pv.preview.vmin} vs ${jmin}`);
  check("bert: the preview's vmax is the greatest --json weight", Math.fround(pv.preview.vmax) === Math.fround(jmax),
        `${pv.preview.vmax} vs ${jmax}`);
  check("bert: the preview is 12 grids of 128 × 128", JSON.stringify(pv.preview.shape) === "[1,12,512,512]" &&
        JSON.stringify(pv.preview.grid) === "[128,128]", JSON.stringify([pv.preview.shape, pv.preview.grid]));
  const vmin = Math.fround(pv.preview.vmin), vmax = Math.fround(pv.preview.vmax);
  const index = Buffer.from(pv.preview.index, "base64");
  let off = 0, worst = 0;
  for (let h = 0; h < 12; h++)
    for (let i = 0; i < 128; i++)
      for (let j = 0; j < 128; j++) {
        let sum = 0;
        for (let q = 4 * i; q < 4 * i + 4; q++) for (let k = 4 * j; k < 4 * j + 4; k++) sum += at(h, q, k);
        const d = Math.abs(index[(h * 128 + i) * 128 + j] - entryOf(sum / 16, vmin, vmax));
        worst = Math.max(worst, d);
        if (d) off++;
      }
  check("bert: each preview block is the entry of its 4 × 4 cells' mean", index.length === 12 * 128 * 128 && off === 0,
        `${off} blocks differ, by up to ${worst}`);

  // the preview drawn alone: a copy cut before its data
  fs.writeFileSync(tmp("bert-cut.html"), html.slice(0, html.indexOf('<script type="application/json" id="attn-data">')));
  const c = await open(tmp("bert-cut.html"), "bert-preview", {drawnOnly: true});
  await until(c.page, () => !!document.querySelector('[role="alert"]'));
  const cut = await c.page.evaluate(() => [document.body.dataset.complete, document.querySelector('[role="alert"]') &&
                                           document.querySelector('[role="alert"]').textContent]);
  check("bert: cut before its data, the page draws its preview and says so", cut[0] === undefined && /data is missing/.test(cut[1]),
        JSON.stringify(cut));
  const prev = await canvasPixels(c.page, "example 0 head 6");
  let bad = 0;
  for (let i = 0; i < 128 * 128; i++) if (!hasEntry(cmap, prev.px, i, index[5 * 128 * 128 + i])) bad++;
  check("bert: the preview's drawing is its grid, one pixel a block", prev.width === 128 && prev.height === 128 && bad === 0,
        `${prev.width}×${prev.height}, ${bad} pixels differ`);
  const loading = await hover(c.page, "example 0 head 6", 300, 17);
  check("bert: hover on the preview names the cell and says the weight is loading",
        loading.includes("query 300 “300” → key 17 “17”") && loading.includes("still loading") && !/float32/.test(loading), loading);
  await c.page.click('canvas[data-panel="example 0 head 2"]');
  const dialogs = await c.page.evaluate(() => document.querySelectorAll('[role="dialog"]').length);
  check("bert: a click on the preview opens nothing yet, and says why", dialogs === 0 &&
        (await tooltipText(c.page)).includes("still loading"), await tooltipText(c.page));
  check("bert: the head view waits for the weights", await c.page.evaluate(() => !document.querySelector("canvas.headview")));
  await c.finish();

  // the whole page, once complete
  const p = await open(tmp("bert.html"), "bert");
  const panels = await p.page.evaluate(() => document.querySelectorAll("canvas[data-panel]").length);
  check("bert: 12 panels", panels === 12, panels);
  const st = await p.page.evaluate(() => [attnPage.preview, attnPage.drawMs <= attnPage.completeMs]);
  check("bert: the page's scale is the preview's", st[0] && st[0].vmin === vmin && st[0].vmax === vmax && st[1], JSON.stringify(st));
  for (const h of [0, 7]) {
    const t = await canvasPixels(p.page, `example 0 head ${h + 1}`);
    check(`bert: head ${h + 1}'s thumbnail is painted at its displayed size`,
          t.width === Math.round(t.clientWidth * t.dpr) && t.width < 512 && Math.abs(t.height - t.width) <= 1,
          JSON.stringify([t.width, t.height, t.clientWidth, t.dpr]));
    let exact = 0, near1 = 0;
    for (let y = 0; y < t.height; y++)
      for (let x = 0; x < t.width; x++) {
        const i = y * t.width + x, e = entryOf(areaMean(W, h * 512 * 512, 512, 512, t.height, t.width, y, x), vmin, vmax);
        if (hasEntry(cmap, t.px, i, e)) exact++;
        else if (hasEntry(cmap, t.px, i, e - 1) || hasEntry(cmap, t.px, i, e + 1)) near1++;
      }
    const n = t.width * t.height;
    check(`bert: head ${h + 1}'s thumbnail pixels are the area means of its weights`, exact + near1 === n && near1 <= n / 100,
          `${exact} exact, ${near1} one entry off, of ${n}`);
  }
  for (const [h, q, k] of [[0, 0, 0], [11, 511, 511], [5, 300, 17], [2, 17, 300]]) {
    const text = await hover(p.page, `example 0 head ${h + 1}`, q, k);
    check(`bert: hover on head ${h + 1}'s thumbnail names query ${q} and key ${k}`, text.includes(`query ${q} “${q}” → key ${k} “${k}”`), text);
    checkWeight(`bert: thumbnail head ${h + 1} (${q}, ${k})`, text, at(h, q, k));
  }
  for (const [h, q, k] of [[0, 0, 0], [11, 511, 511], [5, 300, 17]]) {
    // every cell of a 512 × 512 panel: in the enlarged one
    await p.page.click(`canvas[data-panel="example 0 head ${h + 1}"]`);
    const big = await p.page.evaluate((n) => { const c = document.querySelector(`canvas[data-panel="${n}"]`); return [c.width, c.height]; },
                                      `example 0 head ${h + 1} (enlarged)`);
    check(`bert: head ${h + 1} enlarged is 512 × 512`, big[0] === 512 && big[1] === 512, JSON.stringify(big));
    const text = await hover(p.page, `example 0 head ${h + 1} (enlarged)`, q, k);
    await p.page.keyboard.press("Escape");
    check(`bert: hover head ${h + 1} names query ${q} and key ${k}`, text.includes(`query ${q} “${q}” → key ${k} “${k}”`), text);
    checkWeight(`bert: head ${h + 1} (${q}, ${k})`, text, at(h, q, k));
  }
  check("bert: the head view is drawn", await p.page.evaluate(() => !!document.querySelector("canvas.headview")));
  await p.finish();
};

// posenc: the formula with its numbers, the columns chooser, P·Pᵀ, the table.
groups.posenc = async () => {
  attn(["posenc", "--dim", "32", "--steps", "60", "--json", "pe.json", "--html", "pe.html"]);
  const P = readJSON("pe.json").P;
  const printed = attn(["posenc", "--dim", "32", "--steps", "60", "--check-relative", "1:10"]);
  const p = await open(tmp("pe.html"), "posenc");
  const {page} = p;
  const t = await hover(page, "P", 7, 6);
  const sin76 = Math.sin(7 / Math.pow(10000, 6 / 32)).toFixed(4);
  check("posenc: hover shows the formula with its numbers", t.includes(`sin(7 / 10000^(6/32)) = ${sin76}`), t);
  check("posenc: and names the position and column", t.includes("position 7, column 6"), t);
  check("posenc: the value is P's", t.includes(`P[7, 6] = ${P[7][6].toFixed(4)}`), t);
  const c = await hover(page, "P", 3, 5);
  const want = Math.cos(3 / Math.pow(10000, 4 / 32)).toFixed(4);
  check("posenc: a cos column's formula", c.includes(`cos(3 / 10000^(4/32)) = ${want}`), c);
  const full = /float32 ([-0-9.e+]+)/.exec(c);
  check("posenc: the float32 value of P[3, 5]", full && Math.fround(Number(full[1])) === Math.fround(P[3][5]), c);
  // keyboard: from the cell last hovered, (3, 5)
  await page.focus('canvas[data-panel="P"]');
  for (const k of ["ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight", "ArrowRight", "ArrowUp"]) await page.keyboard.press(k);
  const sel = await page.evaluate(() => attnPage.state.selected);
  check("posenc: the arrow keys move the highlighted cell", sel.panel === "P" && sel.row === 4 && sel.col === 8, JSON.stringify(sel));
  const kt = await tooltipText(page);
  check("posenc: the tooltip follows the keys", kt.includes(`P[4, 8] = ${P[4][8].toFixed(4)}`), kt);
  // the columns: default 6-9, then typed, then clicked
  check("posenc: the plot starts with columns 6-9", JSON.stringify(await page.evaluate(() => attnPage.state.cols)) === "[6,7,8,9]");
  await page.fill('input[aria-label^="columns to plot"]', "0,1,4-5");
  await page.press('input[aria-label^="columns to plot"]', "Enter");
  check("posenc: the chooser plots the columns typed", JSON.stringify(await page.evaluate(() => attnPage.state.cols)) === "[0,1,4,5]");
  const legend = await page.evaluate(() => Array.from(document.querySelectorAll(".legend-item"), (e) => e.textContent).join(","));
  check("posenc: the legend names them", legend === "Col 0,Col 1,Col 4,Col 5", legend);
  const pt = await cellPoint(page, "P", 10, 12);
  await page.mouse.click(pt.x, pt.y);
  check("posenc: clicking a column of P adds it to the plot",
        JSON.stringify(await page.evaluate(() => attnPage.state.cols)) === "[0,1,4,5,12]");
  await page.fill('input[aria-label^="columns to plot"]', "99");
  await page.press('input[aria-label^="columns to plot"]', "Enter");
  check("posenc: a column that does not exist is refused", JSON.stringify(await page.evaluate(() => attnPage.state.cols)) === "[0,1,4,5,12]");
  // P·Pᵀ against the sum over --json's P
  const dot = (i, k) => P[i].reduce((s, v, j) => s + v * P[k][j], 0);
  const sim = await hover(page, "P·Pᵀ", 5, 9);
  check("posenc: hover P·Pᵀ gives P[5]·P[9]", sim.includes(`P[5] · P[9] = ${dot(5, 9).toFixed(4)}`) && sim.includes("offset 4"), sim);
  // the table against what attn prints
  const rows = await page.evaluate(() => Array.from(document.querySelectorAll("table.data tr"), (r) => Array.from(r.cells, (c) => c.textContent)));
  const want10 = [...printed.matchAll(/δ = (\d+)\s+(\d+) positions × (\d+) pairs\s+max \|difference\| = (\S+)/g)];
  check("posenc: the table has δ = 1 … 10", rows.length === 11 && want10.length === 10, rows.length);
  check("posenc: the table's figures are attn's", want10.every((m, i) => rows[i + 1][0] === m[1] && rows[i + 1][1] === m[2] &&
        rows[i + 1][2] === m[3] && Number(rows[i + 1][3]) === Number(m[4])), JSON.stringify(rows.slice(1, 3)));
  await p.finish();

  // concat: the cos half's formula
  attn(["posenc", "--dim", "32", "--steps", "20", "--layout", "concat", "--html", "pc.html"]);
  const q = await open(tmp("pc.html"), "posenc-concat");
  const tc = await hover(q.page, "P", 2, 20);
  check("posenc: concat, a cos-half column", tc.includes(`cos(2 / 10000^(8/32)) = ${Math.cos(2 / Math.pow(10000, 8 / 32)).toFixed(4)}`), tc);
  await q.finish();
};

// complexity: the table is --json's, hover a point for n and the time.
groups.complexity = async () => {
  const args = ["complexity", "--measure", "--sweep", "64:512", "--measure-dim", "16", "--reps", "1"];
  attn(args.concat(["--html", "cx.html"]));
  const {data} = pageData(tmp("cx.html"));
  const p = await open(tmp("cx.html"), "complexity");
  const {page} = p;
  const rows = await page.evaluate(() => Array.from(document.querySelectorAll('table[data-table="layers"] tr[data-layer]'),
    (r) => [r.dataset.layer].concat(Array.from(r.cells, (c) => c.textContent))));
  check("complexity: a table row per layer", rows.length === data.layers.length, rows.length);
  check("complexity: the table holds the data's names, formulas and measured paths",
        data.layers.every((L, i) => rows[i][0] === L.layer && rows[i][1] === L.name && rows[i][2] === L.complexity &&
          rows[i][6] === `${L.path_formula} = ${L.path_formula_value}` && rows[i][7].startsWith(`${L.path_measured} `)),
        JSON.stringify(rows[0]));
  // the measured points: n and time
  const me = data.measure;
  // (measured times: on a busy machine two layers' points at one n may
  // fall on the same pixels, and the tooltip then names either; it must
  // name one whose point is under the mouse, with that layer's time)
  const timeText = (s) => (s >= 1e-3 ? (s * 1e3).toFixed(2) + " ms" : (s * 1e6).toFixed(1) + " µs");
  for (const [si, i] of [[2, 3], [0, 1], [1, 0]]) {
    const pts = await page.evaluate(([n, i]) => { attnPage.charts.measured.canvas.scrollIntoView({block: "center"});
      return Array.from({length: n}, (_, k) => attnPage.charts.measured.pointAt(k, i)); }, [me.layers.length, i]);
    const pt = await page.evaluate(([si, i]) => attnPage.charts.measured.pointAt(si, i), [si, i]);
    await page.mouse.move(pt.x, pt.y);
    const t = await tooltipText(page);
    const under = me.layers.map((L, k) => k).filter((k) => k === si ||
      (pts[k] && Math.hypot(pts[k].x - pt.x, pts[k].y - pt.y) <= 6));
    const L = me.layers[si];
    check(`complexity: hover ${L.layer} at n = ${me.n[i]}`, under.some((k) =>
          t.includes(`n = ${me.n[i]}: ${timeText(me.layers[k].seconds[i])}`) &&
          t.includes(me.layers[k].layer.replace(/_/g, " "))), t);
  }
  const fits = await page.evaluate(() => Array.from(document.querySelectorAll('table[data-table="fits"] tr[data-layer]'),
    (r) => Array.from(r.cells, (c) => c.textContent)));
  check("complexity: the fitted exponents", fits.length === me.layers.length &&
        me.layers.every((L, i) => fits[i][1] === L.slope.toFixed(2) && fits[i][3] === String(L.theory)), JSON.stringify(fits));
  // the cost chart: n²·d at n = 1024
  const pt = await page.evaluate(() => { attnPage.charts.cost.canvas.scrollIntoView({block: "center"});
    const ch = attnPage.charts.cost; return ch.pointAt(2, 28); });
  await page.mouse.move(pt.x, pt.y);
  const c = await tooltipText(page);
  check("complexity: hover the n²·d line at n = 1024", c.includes(`n = 1024, d = 512: ${(1024 * 1024 * 512).toExponential(2).replace("e+", "e")} multiply-adds`), c);
  await p.finish();
  // without --measure: the same command gives the same bytes
  attn(["complexity", "--html", "c1.html"]);
  const first = fs.readFileSync(tmp("c1.html"));
  attn(["complexity", "--html", "c1.html"]);
  check("complexity: without --measure, the same bytes", Buffer.compare(first, fs.readFileSync(tmp("c1.html"))) === 0);
  const q = await open(tmp("c1.html"), "complexity-table");
  check("complexity: without --measure, no measured chart", await q.page.evaluate(() => !attnPage.charts.measured));
  await q.finish();
};

// pool: pointing at a test input (on the fits, the slider, a heatmap's row)
// draws its row of --json's weights under the fits; the heatmaps' cells
// are --json's values; the loss lines are the printed ones; a file name
// that would run as HTML stays text.
async function poolPoint(page, chart, si, i) {
  return page.evaluate(([chart, si, i]) => {
    attnPage.charts[chart].canvas.scrollIntoView({block: "center"});
    return attnPage.charts[chart].pointAt(si, i);
  }, [chart, si, i]);
}
const poolState = (page) => page.evaluate(() => attnPage.state.pool);
groups.pool = async () => {
  const printed = attn(["pool", "--json", "pool.json", "--html", "pool.html"]);
  const json = readJSON("pool.json"), file = tmp("pool.html");
  const {data} = pageData(file);
  check("pool: the page's data is --json's document", JSON.stringify(Object.assign({}, data, {page: undefined})) ===
        JSON.stringify(json));
  check("pool: the chapter's page is under 300 KB without attn's module, 1 MB with it",
        sizeWithoutModule(file) < 300 * 1024 && fs.statSync(file).size < 1024 * 1024, fs.statSync(file).size);
  const names = data.page.names, R = json.results, m = json.x_test.length;
  const p = await open(file, "pool");
  const {page} = p;
  const panels = await page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("pool: one heatmap per result", JSON.stringify(panels) === JSON.stringify(names), panels.join(", "));
  const sameRow = (st, k, j) => st.result === k && st.test === j && st.weights.length === json.x_train.length &&
    st.weights.every((v, i) => v === R[k].attention_weights[j][i]);
  // the fits: hover a test input on the Truth line; its weights under the curve
  for (const j of [3, 17, m - 1]) {
    const pt = await poolPoint(page, "fits", 0, j);
    await page.mouse.move(pt.x, pt.y);
    const st = await poolState(page);
    check(`pool: hovering test input ${j} on the fits draws its weights, --json's row`, sameRow(st, R.length - 1, j),
          JSON.stringify({result: st.result, test: st.test}));
    const tt = await tooltipText(page);
    check(`pool: the fits' tooltip names test input ${j}`, tt.includes(`test input ${j}: x = `), tt);
  }
  // a bar: the training point and its weight, as --json writes it
  const k = R.length - 1, j = m - 1, row = R[k].attention_weights[j];
  const top = row.indexOf(Math.max(...row));
  for (const i of [top, 0]) {
    const bp = await poolPoint(page, "weights", 0, i);
    await page.mouse.move(bp.x, bp.y);
    const bt = await tooltipText(page);
    const mm = /weight (-?[0-9.]+) \(([-0-9.e+]+)\)/.exec(bt);
    check(`pool: hovering bar ${i} names the training point and test input ${j}`,
          bt.includes(`test input ${j} (x = `) && bt.includes(`→ training point ${i}`), bt);
    check(`pool: bar ${i}'s weight with 4 decimals and in full, --json's`, mm && mm[1] === row[i].toFixed(4) &&
          Number(mm[2]) === row[i], `${bt} vs ${row[i]}`);
  }
  // another result, then the slider's keys
  await page.click('button[data-result="1"]');
  let st = await poolState(page);
  check("pool: a result's button draws its weights of the same test input", sameRow(st, 1, j), JSON.stringify(st.result));
  await page.focus('input[data-control="test"]');
  await page.keyboard.press("Home");
  for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowRight");
  st = await poolState(page);
  check("pool: the slider moves the test input", sameRow(st, 1, 5), st.test);
  const cursor = await page.evaluate(() => document.querySelector('[data-pool="query"]').textContent);
  check("pool: the line under the fits says the test input and its prediction",
        cursor.includes(`test input 5: x = ${json.x_test[5]}`) && cursor.includes("ŷ = Σ weight · y_i = "), cursor);
  // the heatmaps: cells in --json's colours, hover a cell for its weight, its row under the fits
  let vmin = Infinity, vmax = -Infinity;
  for (const r of R) for (const rw of r.attention_weights) for (const v of rw) { vmin = Math.min(vmin, v); vmax = Math.max(vmax, v); }
  const lut = data.page.cmap.lut;
  for (const [kk, r, c] of [[0, 0, 0], [1, 10, 12], [2, 25, 24], [2, 40, 3], [2, m - 1, json.x_train.length - 1]]) {
    const w = R[kk].attention_weights[r][c];
    const got = await cellRGB(page, names[kk], r, c), want = cmapRGB(lut, w, vmin, vmax);
    check(`pool: ${names[kk]} (${r}, ${c}) is drawn in --json's colour`, got.join() === want.join(), `${got} vs ${want}`);
    const text = await hover(page, names[kk], r, c);
    const mm = /weight (-?[0-9.]+) \(([-0-9.e+]+)\)/.exec(text);
    check(`pool: hover ${names[kk]} (${r}, ${c}) names the test input and the training point`,
          text.includes(`test input ${r} (x = `) && text.includes(`training point ${c} (x = `), text);
    check(`pool: hover ${names[kk]} (${r}, ${c}) shows --json's weight`, mm && mm[1] === w.toFixed(4) && Number(mm[2]) === w,
          `${text} vs ${w}`);
    check(`pool: hovering a row of ${names[kk]} draws that row under the fits`, sameRow(await poolState(page), kk, r));
  }
  // the loss: the book's lines as attn printed them
  const lines = await page.evaluate(() => document.querySelector('[data-pool="losses"]').textContent);
  check("pool: the loss lines are the printed ones", lines === printed.split("\n").filter((l) => l.startsWith("epoch ")).join("\n") &&
        lines.split("\n").length === 5, lines);
  const lp = await poolPoint(page, "loss", 0, 2);
  await page.mouse.move(lp.x, lp.y);
  const lt = await tooltipText(page);
  check("pool: hover the loss at epoch 3", lt.includes(`epoch 3`) && lt.includes(`loss ${R[k].losses[2].toFixed(6)}`), lt);
  await p.finish();

  // a file name that would run as HTML: shown in the command line as text
  const evil = "<img src=x onerror=window.__pwned=1>\u2028&.json";
  fs.writeFileSync(tmp(evil), JSON.stringify({x_train: [3, 1, 2.5, 0.2], y_train: [1, 2, 0.5, 1.5], x_test: [0, 1, 2, 9]}));
  attn(["pool", "--input", evil, "--method", "average,nonparametric", "--kernel", "boxcar", "--sigma", "0.5",
        "--json", "evil.json", "--html", "evil.html"]);
  const ev = pageData(tmp("evil.html")), ej = readJSON("evil.json");
  check("pool: the data element holds no '<', '>', '&' or raw U+2028", !/[<>&\u2028]/.test(ev.raw));
  check("pool: exactly two script elements (and attn's module)", (ev.html.match(/<script/g) || []).length === scriptCount(ev.html));
  const q = await open(tmp("evil.html"), "pool-input");
  await q.page.waitForTimeout(200);
  check("pool: no handler ran", (await q.page.evaluate(() => window.__pwned)) === undefined);
  check("pool: no img or svg element was made", (await q.page.evaluate(() => document.querySelectorAll("img, svg").length)) === 0);
  const cmd = await q.page.evaluate(() => document.querySelector("pre.cmdline").textContent);
  check("pool: the file name is shown as text", cmd.includes(evil), cmd);
  // a test input no training point reaches: every weight 0, no prediction
  const ep = await poolPoint(q.page, "fits", 0, 3);
  await q.page.mouse.move(ep.x, ep.y);
  const es = await poolState(q.page);
  check("pool: a test input out of reach: its weights, all 0", es.test === 3 && es.weights.every((v) => v === 0) &&
        ej.results[1].y_hat[3] === null, JSON.stringify(es));
  const said = await q.page.evaluate(() => document.querySelector('[data-pool="query"]').textContent);
  check("pool: and the page says so", said.includes("no training point reaches it"), said);
  await q.finish();
};

// The colour a cell of value v gets (matplotlib's rule on the page's
// 256-entry table of "rrggbb…", scale lo … hi).
function cmapRGB(lut, v, lo, hi) {
  const t = (v - lo) / (hi - lo);
  const i = !(t > 0) ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
  return [0, 1, 2].map((c) => parseInt(lut.substr(6 * i + 2 * c, 2), 16));
}
async function cellRGB(page, panel, r, c) {
  return page.evaluate(([panel, r, c]) => {
    const cv = document.querySelector(`canvas[data-panel="${panel}"]`);
    const cw = cv.width / Number(cv.dataset.cols), ch = cv.height / Number(cv.dataset.rows);
    return attnPage.pixelAt(cv, Math.floor((c + 0.5) * cw), Math.floor((r + 0.5) * ch)).slice(0, 3);
  }, [panel, r, c]);
}
async function slideTo(page, index) {
  await page.focus('input[aria-label="training step"]');
  await page.keyboard.press("Home");
  for (let i = 0; i < index; i++) await page.keyboard.press("ArrowRight");
}

// train: the slider moves the heatmaps to each step's weights, the curves'
// cursor with them; the last step's weights are the saved model's.
groups.train = async () => {
  attn(["train", "--steps", "60", "--log-every", "10", "--json", "tr.json", "--save", "model.json", "--html", "tr.html"]);
  const json = readJSON("tr.json");
  const {data} = pageData(tmp("tr.html"));
  const run = data.page.runs[0];
  check("train: the page's steps are 0 and every logged step", JSON.stringify(run.steps) ===
        JSON.stringify([0].concat(json.history.map((h) => h.step))), JSON.stringify(run.steps));
  const A = flat(run.attention), T = run.length, NH = run.heads, per = NH * T * T;
  check("train: the attention of every step, (steps, probes, layers, heads, T, T)",
        JSON.stringify(run.attention.shape) === JSON.stringify([run.steps.length, 1, 1, NH, T, T]), JSON.stringify(run.attention.shape));
  const w = (i, h, q, k) => A[i * per + (h * T + q) * T + k];
  // the last step against the saved model run by selfattn
  const tokens = run.probes[0].tokens;
  attn(["selfattn", "--input", "model.json", "--tokens", tokens.join(" "), "--json", "sa.json"]);
  const SA = readJSON("sa.json").attention_weights[0]; // (NH, T, T)
  let worst = 0;
  for (let h = 0; h < NH; h++) for (let q = 0; q < T; q++) for (let k = 0; k < T; k++)
    worst = Math.max(worst, Math.abs(SA[h][q][k] - w(run.steps.length - 1, h, q, k)));
  check("train: the last step's attention is the saved model's (selfattn --input)", worst < 1e-5, worst);
  // and selfattn --input model.json's own page
  attn(["selfattn", "--input", "model.json", "--tokens", tokens.join(" "), "--html", "sa.html"]);
  const sp = await open(tmp("sa.html"), "selfattn-model");
  const ts = await hover(sp.page, "example 0 head 3", 5, 2);
  check("train: selfattn --input model.json labels the probe's tokens", ts.includes(`query 5 “${tokens[5]}” → key 2 “${tokens[2]}”`), ts);
  checkWeight("train: selfattn --input model.json's page", ts, SA[2][5][2]);
  await sp.finish();

  const p = await open(tmp("tr.html"), "train");
  const {page} = p;
  const last = run.steps.length - 1;
  check("train: the page opens at the last step", (await page.evaluate(() => attnPage.state.step.index)) === last);
  const lut = data.page.cmap.lut;
  for (const i of [0, 2, last]) {
    await slideTo(page, i);
    const st = await page.evaluate(() => attnPage.state.step);
    check(`train: the slider goes to step ${run.steps[i]}`, st.index === i && st.step === run.steps[i], JSON.stringify(st));
    let same = true, detail = "";
    for (const [h, q, k] of [[0, 0, 7], [1, 3, 4], [3, 7, 0], [2, 5, 5]]) {
      const got = await cellRGB(page, `layer 1 head ${h + 1}`, q, k), want = cmapRGB(lut, w(i, h, q, k), 0, 1);
      if (got.join() !== want.join()) { same = false; detail = `head ${h + 1} (${q}, ${k}): ${got} vs ${want}`; }
    }
    check(`train: the cells drawn at step ${run.steps[i]} are that step's weights`, same, detail);
    const cursor = await page.evaluate(() => [attnPage.charts.loss.cursor, attnPage.charts.accuracy.cursor]);
    check(`train: the curves' cursor is at step ${run.steps[i]}`, cursor[0] === run.steps[i] && cursor[1] === run.steps[i], cursor);
    const info = await page.textContent(".stepinfo");
    const h = json.history.find((e) => e.step === run.steps[i]);
    check(`train: the step line gives step ${run.steps[i]}'s loss`, h ? info.includes(`loss ${h.loss.toFixed(4)}`) : info.includes("before training"), info);
  }
  const t = await hover(page, "layer 1 head 2", 6, 1);
  checkWeight("train: hover at the last step", t, w(last, 1, 6, 1));
  // a cell that changes: the drawn colour follows
  await slideTo(page, 0);
  const before = await cellRGB(page, "layer 1 head 1", 0, 7);
  await slideTo(page, last);
  const after = await cellRGB(page, "layer 1 head 1", 0, 7);
  check("train: moving the slider redraws the cells", before.join() !== after.join() || w(0, 0, 0, 7) === w(last, 0, 0, 7), `${before} ${after}`);
  // the keys on the page, and play
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  check("train: ← steps back", (await page.evaluate(() => attnPage.state.step.index)) === last - 2);
  await page.keyboard.press("Home");
  check("train: Home goes to step 0", (await page.evaluate(() => attnPage.state.step.step)) === 0);
  await page.click('button[aria-label="play"]');
  await page.waitForTimeout(900);
  const played = await page.evaluate(() => [attnPage.state.step.index, attnPage.state.playing]);
  check("train: play moves through the steps", played[0] > 0, JSON.stringify(played));
  await until(page, () => !attnPage.state.playing, 10000);
  check("train: play stops at the last step", (await page.evaluate(() => attnPage.state.step.index)) === last);
  await p.finish();

  // a stack: the same page with two layers (the second the first's
  // transpose), as attn train --layers 2 would write it: rows = layers
  const stackData = JSON.parse(JSON.stringify(data));
  const sr = stackData.page.runs[0], S = sr.steps.length, L2 = new Float32Array(S * 2 * per);
  for (let i = 0; i < S; i++)
    for (let h = 0; h < NH; h++)
      for (let q = 0; q < T; q++)
        for (let k = 0; k < T; k++) {
          L2[(i * 2 + 0) * per + (h * T + q) * T + k] = w(i, h, q, k);
          L2[(i * 2 + 1) * per + (h * T + q) * T + k] = w(i, h, k, q);
        }
  sr.layers = 2;
  sr.attention = {dtype: "float32", shape: [S, 1, 2, NH, T, T], base64: Buffer.from(L2.buffer).toString("base64")};
  const esc = JSON.stringify(stackData).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  const html = fs.readFileSync(tmp("tr.html"), "utf8");
  fs.writeFileSync(tmp("stack.html"), html.replace(/(<script type="application\/json" id="attn-data">)[\s\S]*?(<\/script>)/,
                                                    (m, a, b) => a + esc + b));
  const st = await open(tmp("stack.html"), "train-stack");
  const spanels = await st.page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("train: a stack has a row of heads per layer", spanels.length === 2 * NH && spanels.includes("layer 1 head 1") &&
        spanels.includes("layer 2 head 4"), spanels.join(", "));
  await slideTo(st.page, 2);
  const l1 = await cellRGB(st.page, "layer 2 head 2", 1, 6), l0 = await cellRGB(st.page, "layer 1 head 2", 6, 1);
  check("train: a stack's second layer is drawn from its own weights", l1.join() === cmapRGB(lut, w(2, 1, 6, 1), 0, 1).join() &&
        l0.join() === l1.join(), `${l1} ${l0}`);
  const sl = await hover(st.page, "layer 2 head 3", 2, 5);
  checkWeight("train: hover in a stack's second layer", sl, w(2, 2, 5, 2));
  await st.finish();

  // apple: 苹果's row in each sentence
  attn(["train", "--task", "apple", "--steps", "40", "--log-every", "10", "--html", "ap.html"]);
  const ap = pageData(tmp("ap.html")).data.page.runs[0];
  const q = await open(tmp("ap.html"), "train-apple");
  const names = await q.page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("train: apple, a row of panels per sentence", names.includes("fruit layer 1 head 1") && names.includes("company layer 1 head 4"),
        names.join(", "));
  const AA = flat(ap.attention), TT = ap.length, at = ap.probes[1].at;
  const ta = await hover(q.page, "company layer 1 head 2", 0, 3);
  check("train: apple, the row is 苹果's", ta.includes(`query ${at} “苹果” → key 3 “${ap.probes[1].tokens[3]}”`), ta);
  const wa = AA[((ap.steps.length - 1) * 2 * ap.heads + ap.heads + 1) * TT * TT + at * TT + 3];
  checkWeight("train: apple, 苹果's weight", ta, wa);
  await q.finish();

  // --compare-posenc: one slider, both runs
  attn(["train", "--compare-posenc", "--steps", "40", "--log-every", "10", "--html", "cp.html"]);
  const cp = pageData(tmp("cp.html")).data;
  check("train: compare, two runs in the data", cp.compare_posenc === true && cp.runs.length === 2 && cp.page.runs.length === 2);
  const r = await open(tmp("cp.html"), "train-compare");
  for (const [k, label] of [[0, "with P"], [1, "without P"]]) {
    const R = cp.page.runs[k], AR = flat(R.attention), n = R.length, pr = R.heads * n * n;
    let ok = true;
    for (const i of [0, 3]) {
      await slideTo(r.page, i);
      const got = await cellRGB(r.page, `${label} layer 1 head 1`, 2, 5);
      if (got.join() !== cmapRGB(cp.page.cmap.lut, AR[i * pr + 2 * n + 5], 0, 1).join()) ok = false;
    }
    check(`train: compare, the slider moves the ${label} run`, ok);
  }
  await r.finish();

  // a language model, with and without the mask: the causal run's later
  // keys grey, the other's in the colour map; no controls (its text is a
  // file the page does not hold); the samples and the why below
  attn(["train", "--task", "lm", "--compare-causal", "--steps", "40", "--log-every", "10", "--sample", "30",
        "--json", "lm.json", "--html", "lm.html"]);
  const lj = readJSON("lm.json"), lp = pageData(tmp("lm.html")).data;
  const m = await open(tmp("lm.html"), "train-lm");
  check("train lm: no controls", await m.page.evaluate(() => document.querySelectorAll("section.live").length === 0));
  const NR = lp.page.runs[1], AN = flat(NR.attention), nn = NR.length, lastAt = (NR.steps.length - 1) * NR.layers * NR.heads * nn * nn;
  const [later, earlier, open2] = [await cellRGB(m.page, "causal layer 1 head 1", 2, 5),
                                   await cellRGB(m.page, "causal layer 1 head 1", 5, 2),
                                   await cellRGB(m.page, "no mask layer 1 head 1", 2, 5)];
  check("train lm: the causal run's later keys are drawn grey", later[0] === later[1] && later[1] === later[2] &&
        earlier.join() !== later.join(), `${later} ${earlier}`);
  check("train lm: the no-mask run's later keys in the colour map",
        open2.join() === cmapRGB(lp.page.cmap.lut, AN[lastAt + 2 * nn + 5], 0, 1).join(), `${open2}`);
  const shown = await m.page.evaluate(() => Array.from(document.querySelectorAll(".lm-sample pre"), (p) => p.textContent));
  check("train lm: both samples shown as --json has them",
        shown.length === 2 && shown.every((t, k) => t === lj.runs[k].sample.prompt + lj.runs[k].sample.text), shown.join(" | "));
  check("train lm: the why", await m.page.evaluate(() => document.body.textContent.includes("the no-mask model cannot generate")));
  await m.finish();
};

// translate: the step slider moves the cross-attention (and the encoder's
// and the decoder's self-attention, one selector away), the heads'
// mean, the probe's translation and the curves' cursor together.
groups.translate = async () => {
  attn(["train", "--task", "translate", "--steps", "60", "--log-every", "20", "--json", "tj.json", "--save", "tm.json",
        "--html", "tp.html"]);
  const json = readJSON("tj.json");
  const {data} = pageData(tmp("tp.html"));
  const pg = data.page, steps = pg.steps, last = steps.length - 1;
  const L = pg.model.layers, NH = pg.model.heads, src = pg.source, tgt = pg.target, Ts = src.length, Tq = tgt.length;
  const C = flat(pg.cross), E = flat(pg.encoder), D = flat(pg.decoder);
  // weight of step i, block l, head h, query q, key k of an attention (…, nq, nk)
  const at = (A, nq, nk) => (i, l, h, q, k) => A[(((i * L + l) * NH + h) * nq + q) * nk + k];
  const cw = at(C, Tq, Ts), ew = at(E, Ts, Ts), dw = at(D, Tq, Tq);
  const mean = (i, l, q, k) => { let s = 0; for (let h = 0; h < NH; h++) s += cw(i, l, h, q, k); return Math.fround(s / NH); };
  const lut = pg.cmap.lut;
  check("translate: the page's steps are 0 and every logged step",
        JSON.stringify(steps) === JSON.stringify([0].concat(json.history.map((h) => h.step))), JSON.stringify(steps));
  const p = await open(tmp("tp.html"), "translate");
  const {page} = p;
  const names = await page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  const want = [];
  for (const kind of ["cross", "encoder", "decoder"])
    for (let l = 1; l <= L; l++) {
      for (let h = 1; h <= NH; h++) want.push(`${kind} block ${l} head ${h}`);
      want.push(`${kind} block ${l} heads averaged`);
    }
  check("translate: a panel per attention, block and head, and the heads averaged", JSON.stringify(names) === JSON.stringify(want),
        names.join(", "));
  const st0 = await page.evaluate(() => [attnPage.state.step.index, attnPage.state.show]);
  check("translate: the page opens at the last step, on the cross-attention", st0[0] === last && st0[1] === "cross", JSON.stringify(st0));
  const shown = () => page.evaluate(() => Array.from(document.querySelectorAll(".xview[data-view]"),
    (v) => v.dataset.view + ":" + (v.offsetParent !== null)).join(" "));
  check("translate: only the cross-attention is shown", (await shown()) === "cross:true encoder:false decoder:false", await shown());

  // the slider: the cells, the heads' mean, the cursor, the step line, the translation
  const before = await page.evaluate(() => document.querySelector('canvas[data-panel="cross block 2 head 1"]').toDataURL());
  for (const i of [0, 2, last]) {
    await slideTo(page, i);
    const st = await page.evaluate(() => attnPage.state.step);
    check(`translate: the slider goes to step ${steps[i]}`, st.index === i && st.step === steps[i], JSON.stringify(st));
    let same = true, detail = "";
    for (const [l, h, q, k] of [[0, 0, 0, 0], [1, 2, 3, 2], [1, 3, Tq - 1, Ts - 1], [0, 1, 2, 4]]) {
      const got = await cellRGB(page, `cross block ${l + 1} head ${h + 1}`, q, k), w = cmapRGB(lut, cw(i, l, h, q, k), 0, 1);
      if (got.join() !== w.join()) { same = false; detail = `block ${l + 1} head ${h + 1} (${q}, ${k}): ${got} vs ${w}`; }
    }
    check(`translate: the cross-attention drawn at step ${steps[i]} is that step's`, same, detail);
    const m = await cellRGB(page, "cross block 2 heads averaged", 4, 3);
    check(`translate: the heads averaged at step ${steps[i]}`, m.join() === cmapRGB(lut, mean(i, 1, 4, 3), 0, 1).join(), `${m}`);
    const cursor = await page.evaluate(() => [attnPage.charts.loss.cursor, attnPage.charts.scores.cursor]);
    check(`translate: the curves' cursor is at step ${steps[i]}`, cursor[0] === steps[i] && cursor[1] === steps[i], cursor);
    const info = await page.textContent(".stepinfo");
    const h = json.history.find((e) => e.step === steps[i]);
    check(`translate: the step line gives step ${steps[i]}'s loss and BLEU`, h ? info.includes(`loss ${h.loss.toFixed(4)}`) &&
          info.includes(`held-out BLEU ${h.heldout_bleu.toFixed(3)}`) : info.includes("before training"), info);
    const line = await page.evaluate(() => document.querySelectorAll("dl.sentence .words")[2].textContent);
    check(`translate: the probe's translation at step ${steps[i]}`, line === (pg.step_translations[i] || "(nothing: <eos> first)"), line);
  }
  const after = await page.evaluate(() => document.querySelector('canvas[data-panel="cross block 2 head 1"]').toDataURL());
  check("translate: the last step is drawn the same again", before === after);
  await slideTo(page, 0);
  const first = await page.evaluate(() => document.querySelector('canvas[data-panel="cross block 2 head 1"]').toDataURL());
  check("translate: moving the slider redraws the panels (step 0 differs)", first !== after);
  await slideTo(page, last);

  // hover: the target word, the source word, the weight
  for (const [l, h, q, k] of [[1, 0, 3, 2], [0, 2, 0, Ts - 1]]) {
    const text = await hover(page, `cross block ${l + 1} head ${h + 1}`, q, k);
    check(`translate: hover names target word ${q} and source word ${k}`,
          text.includes(`target word ${q} “${tgt[q]}” → source word ${k} “${src[k]}”`), text);
    checkWeight(`translate: cross block ${l + 1} head ${h + 1} (${q}, ${k})`, text, cw(last, l, h, q, k));
  }
  const framed = pg.align.findIndex((a) => a >= 0);
  const ft = await hover(page, "cross block 2 head 1", framed, pg.align[framed]);
  check("translate: the tooltip says which source word a target word translates", ft.includes(`framed: “${tgt[framed]}” translates`), ft);
  const edge = () => page.evaluate(([q, k]) => {
    const cv = document.querySelector('canvas[data-panel="cross block 2 head 1"]');
    const c = cv.width / Number(cv.dataset.cols), r = cv.height / Number(cv.dataset.rows);
    return attnPage.pixelAt(cv, Math.floor(k * c), Math.floor(q * r + r / 2)).slice(0, 3).join();
  }, [framed, pg.align[framed]]);
  check("translate: the word it translates is framed in blue", (await edge()) === "29,106,192", await edge());
  await page.click('input[data-control="align"]');
  check("translate: the frame can be turned off", (await edge()) !== "29,106,192", await edge());

  // the selector: encoder, decoder, all three; keys 1 … 4
  await page.click('button[data-show="encoder"]');
  check("translate: the selector shows the encoder's self-attention", (await shown()) === "cross:false encoder:true decoder:false", await shown());
  const et = await hover(page, "encoder block 1 head 2", 1, 3);
  check("translate: encoder hover names two source words", et.includes(`source word 1 “${src[1]}” → source word 3 “${src[3]}”`), et);
  checkWeight("translate: encoder block 1 head 2", et, ew(last, 0, 1, 1, 3));
  await page.click('button[data-show="decoder"]');
  check("translate: the selector shows the decoder's self-attention", (await shown()) === "cross:false encoder:false decoder:true", await shown());
  const dt = await hover(page, "decoder block 2 head 3", 4, 4);
  check("translate: decoder hover names the target word and the decoder's input",
        dt.includes(`target word 4 “${tgt[4]}” → decoder input 4 “${pg.decoder_input[4]}”`) && !dt.includes("masked"), dt);
  checkWeight("translate: decoder block 2 head 3", dt, dw(last, 1, 2, 4, 4));
  const dm = await hover(page, "decoder block 1 head 1", 2, 5);
  check("translate: a later key of the decoder is masked (causal)", dm.includes("masked (causal"), dm);
  await slideTo(page, 2);
  const dc = await cellRGB(page, "decoder block 1 head 4", 5, 2);
  check("translate: the decoder's panels follow the slider", dc.join() === cmapRGB(lut, dw(2, 0, 3, 5, 2), 0, 1).join(), `${dc}`);
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("4");
  check("translate: key 4 shows all three", (await shown()) === "cross:true encoder:true decoder:true", await shown());
  await page.keyboard.press("1");
  check("translate: key 1 shows the cross-attention again", (await shown()) === "cross:true encoder:false decoder:false", await shown());

  // the keys and play
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  check("translate: ← steps back", (await page.evaluate(() => attnPage.state.step.index)) === last - 1);
  await page.keyboard.press("Home");
  await page.click('button[aria-label="play"]');
  await page.waitForTimeout(700);
  check("translate: play moves through the steps", (await page.evaluate(() => attnPage.state.step.index)) > 0);
  await until(page, () => !attnPage.state.playing, 10000);
  check("translate: play stops at the last step", (await page.evaluate(() => attnPage.state.step.index)) === last);

  // the held-out translations
  const rows = await page.evaluate(() => Array.from(document.querySelectorAll('table[data-table="translations"] tr[data-row]'),
    (r) => Array.from(r.cells, (c) => c.textContent)));
  const t0 = pg.translations.shown[0];
  check("translate: the held-out table", rows.length === pg.translations.shown.length && rows[0][1] === t0.source &&
        rows[0][2] === t0.translation && rows[0][3] === t0.reference && rows[0][4] === t0.bleu.toFixed(3), JSON.stringify(rows[0]));
  await p.finish();

  // attn translate --html of the saved model: one state, no slider
  const sent = "the small green apple wants the big blue boy .", ref = "la petite pomme verte veut le grand garçon bleu .";
  attn(["translate", "--input", "tm.json", "--all", "--reference", ref, "--json", "tx.json", "--html", "tx.html", sent]);
  const xj = readJSON("tx.json"), X = flat(xj.cross_attention), XE = flat(xj.encoder_attention);
  const R = xj.target.length, XS = xj.source.length;
  const q = await open(tmp("tx.html"), "translate-command");
  check("translate: attn translate's page has no slider", (await q.page.$$('input[type="range"]')).length === 0);
  const sel = await q.page.evaluate(() => Array.from(document.querySelectorAll("button[data-show]"), (b) => b.dataset.show).join());
  check("translate: with --all, the selector offers all three", sel === "cross,encoder,decoder,all", sel);
  const words = await q.page.evaluate(() => Array.from(document.querySelectorAll("dl.sentence .words"), (w) => w.textContent));
  check("translate: the sentence, its translation and the reference", words[0] === sent &&
        words[1] === xj.translation.join(" ") && words[2] === ref, JSON.stringify(words));
  const ot = await hover(q.page, "cross block 2 head 3", 2, 3);
  check("translate: attn translate's hover names the word written and the source word",
        ot.includes(`target word 2 “${xj.target[2]}” → source word 3 “${xj.source[3]}”`), ot);
  checkWeight("translate: attn translate's cross-attention is --json's", ot, X[((1 * NH + 2) * R + 2) * XS + 3]);
  await q.page.click('button[data-show="encoder"]');
  const oe = await hover(q.page, "encoder block 1 head 1", 4, 0);
  checkWeight("translate: attn translate's encoder self-attention is --json's", oe, XE[(0 * XS + 4) * XS + 0]);
  await q.finish();
  attn(["translate", "--input", "tm.json", "--html", "tx1.html", sent]);
  const q1 = await open(tmp("tx1.html"), "translate-command-cross");
  const sel1 = await q1.page.evaluate(() => Array.from(document.querySelectorAll("button[data-show]"), (b) => b.dataset.show).join());
  check("translate: without --all, the cross-attention only", sel1 === "cross", sel1);
  await q1.finish();

  // --arch bahdanau: its one attention (the query s(t′−1)) on the slider,
  // no self-attention, no blocks or heads in its labels
  attn(["train", "--task", "translate", "--arch", "bahdanau", "--steps", "40", "--log-every", "10",
        "--json", "bj.json", "--html", "bp.html"]);
  const bjson = readJSON("bj.json"), bpg = pageData(tmp("bp.html")).data.page, bsteps = bpg.steps, blast = bsteps.length - 1;
  const BC = flat(bpg.cross), bTs = bpg.source.length, bTq = bpg.target.length;
  const bw = (i, q, k) => BC[(i * bTq + q) * bTs + k];
  check("translate: bahdanau, the model and its one attention in the data", bpg.model.arch === "bahdanau" &&
        bpg.model.layers === 1 && bpg.model.heads === 1 && bpg.model.gru_layers === 1 && bpg.encoder === null &&
        bpg.decoder === null && BC.length === bsteps.length * bTq * bTs, JSON.stringify(bpg.model));
  check("translate: bahdanau, the page's steps are 0 and every logged step",
        JSON.stringify(bsteps) === JSON.stringify([0].concat(bjson.history.map((h) => h.step))), JSON.stringify(bsteps));
  const b = await open(tmp("bp.html"), "translate-bahdanau");
  const bnames = await b.page.evaluate(() => Array.from(document.querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("translate: bahdanau, one panel: its attention", JSON.stringify(bnames) === '["bahdanau attention"]', bnames.join(", "));
  const bsel = await b.page.evaluate(() => Array.from(document.querySelectorAll("button[data-show]"), (x) => x.dataset.show).join());
  check("translate: bahdanau, no self-attention to select", bsel === "cross", bsel);
  const btext = await b.page.evaluate(() => document.getElementById("attn-root").innerText);
  check("translate: bahdanau, its attention named, no block or head", btext.includes("its query the decoder's previous state s(t′−1)") &&
        !/block 1|head 1|Head 1|heads averaged/.test(btext), btext.match(/.{0,40}(block 1|head 1|Head 1|heads averaged).{0,40}/));
  for (const i of [0, 2, blast]) {
    await slideTo(b.page, i);
    const st = await b.page.evaluate(() => attnPage.state.step);
    let same = st.index === i && st.step === bsteps[i], detail = JSON.stringify(st);
    for (const [q, k] of [[0, 0], [2, 3], [bTq - 1, bTs - 1]]) {
      const got = await cellRGB(b.page, "bahdanau attention", q, k), w = cmapRGB(bpg.cmap.lut, bw(i, q, k), 0, 1);
      if (got.join() !== w.join()) { same = false; detail = `(${q}, ${k}): ${got} vs ${w}`; }
    }
    check(`translate: bahdanau, the slider draws step ${bsteps[i]}'s attention`, same, detail);
  }
  const bt = await hover(b.page, "bahdanau attention", 2, 1);
  check("translate: bahdanau, hover names its attention, the target word and the source word",
        bt.includes("bahdanau · attention") && bt.includes(`target word 2 “${bpg.target[2]}” → source word 1 “${bpg.source[1]}”`), bt);
  checkWeight("translate: bahdanau, the weight hovered", bt, bw(blast, 2, 1));
  await b.finish();

  // tokens that would run as HTML: text on the page
  const bad = ["</script><img/src=x/onerror=window.__pwned=1>", "<svg/onload=window.__pwned=2>", "a\u2028b&amp;"];
  const pairs = [];
  for (let i = 0; i < 6; i++) pairs.push([`the ${bad[i % 3]} cat .`, `le ${bad[(i + 1) % 3]} chat .`]);
  fs.writeFileSync(tmp("evil-pairs.json"), JSON.stringify({pairs, heldout: {pairs: [pairs[0]]}}));
  attn(["train", "--data", "evil-pairs.json", "--min-freq", "1", "--steps", "4", "--log-every", "2", "--html", "te.html"]);
  const r = await open(tmp("te.html"), "translate-security");
  await r.page.waitForTimeout(200);
  check("translate: no handler ran", (await r.page.evaluate(() => window.__pwned)) === undefined);
  check("translate: no img or svg element", (await r.page.evaluate(() => document.querySelectorAll("img, svg").length)) === 0);
  const xt = await r.page.evaluate(() => Array.from(document.querySelectorAll(".hm-xt")[0].querySelectorAll(".tick"), (t) => t.textContent));
  check("translate: the source words are shown as text", JSON.stringify(xt) === JSON.stringify(["the", bad[0], "cat", ".", "<eos>"]),
        JSON.stringify(xt));
  const rt = await hover(r.page, "cross block 1 head 1", 1, 1);
  check("translate: the tooltip shows them as text", rt.includes(`“${bad[1]}”`) && rt.includes(`“${bad[0]}”`), rt);
  const cells = await r.page.evaluate(() => document.querySelector('table[data-table="translations"] tr[data-row] td:nth-child(2)').textContent);
  check("translate: the held-out table shows them as text", cells === pairs[0][0], cells);
  await r.finish();

  // --compare-rnn (SPEC §15): Bahdanau's model twice, each run's view named
  // by its label, the slider moving both; the table without the
  // sequential steps' rows
  attn(["train", "--task", "translate", "--compare-rnn", "--steps", "40", "--log-every", "20", "--html", "cr.html"]);
  const cr = pageData(tmp("cr.html")).data;
  check("translate: --compare-rnn, two Bahdanau runs labelled gru and lstm",
        cr.compare_rnn === true && cr.page.runs.map((u) => `${u.arch} ${u.label}`).join() === "bahdanau gru,bahdanau lstm");
  const c = await open(tmp("cr.html"), "translate-compare-rnn");
  const views = await c.page.evaluate(() => Array.from(document.querySelectorAll("[data-view]"), (v) => v.dataset.view));
  check("translate: --compare-rnn, a view per run", views.join() === "gru,lstm", views.join());
  const heads = await c.page.evaluate(() => Array.from(document.querySelectorAll('table[data-table="compare"] tr'), (t) => t.cells[0].textContent));
  check("translate: --compare-rnn, the table's rows", heads.length === 6 && !heads.some((h) => h.startsWith("sequential")), heads.join("|"));
  const panels = await c.page.evaluate(() => Array.from(document.querySelectorAll("[data-view] canvas[data-panel]"), (e) => e.dataset.panel));
  const cq = cr.page.target.length, cs = cr.page.source.length;
  let moved = true;
  for (const [k, panel] of panels.entries()) {
    const R = cr.page.runs[k], A = flat(R.cross), per = R.layers * R.heads * cq * cs;
    for (const i of [0, R.steps.length - 1]) {
      await slideTo(c.page, i);
      const got = await cellRGB(c.page, panel, 1, 2);
      if (got.join() !== cmapRGB(cr.page.cmap.lut, A[i * per + 1 * cs + 2], 0, 1).join()) moved = false;
    }
  }
  check("translate: --compare-rnn, the slider moves both runs' attention", panels.length === 2 && moved, panels.join(", "));
  await c.finish();
};

// tour: every step, its commands, their output and the views, on one page.
groups.tour = async () => {
  const out = attn(["tour", "--out", "t", "--html"]);
  const file = tmp(path.join("t", "index.html"));
  const {data} = pageData(file);
  check("tour: eighteen steps in the data", data.steps.length === 18, data.steps.length);
  const p = await open(file, "tour");
  const {page} = p;
  const secs = await page.evaluate(() => Array.from(document.querySelectorAll("section.tour-step"), (s) => ({
    h: s.querySelector("h2").textContent, cmds: Array.from(s.querySelectorAll(":scope > pre.cmdline"), (c) => c.textContent),
    outs: Array.from(s.querySelectorAll(":scope > pre.output"), (c) => c.textContent),
    views: s.querySelectorAll(".tour-view").length})));
  check("tour: a section per step, in order", secs.length === 18 &&
        secs[0].h === "Step 1 · Attention cues: queries, keys and values" &&
        secs[1].h === "Step 2 · Attention pooling: Nadaraya–Watson regression" &&
        secs[2].h === "Step 3 · Attention scoring functions" && secs[3].h === "Step 4 · Why scores are divided by √d" &&
        secs[4].h === "Step 5 · Bahdanau attention" &&
        secs[5].h === "Step 6 · Multi-head attention" && secs[14].h === "Step 15 · Attention that learns" &&
        secs[15].h === "Step 16 · Two layers: an induction head" &&
        secs[16].h === "Step 17 · Cross-attention that translates" &&
        secs[17].h === "Step 18 · Attention over images: the Vision Transformer", secs.map((s) => s.h).join(" | "));
  let cmdsOk = true, outsOk = true, n = 0;
  data.steps.forEach((st, i) => st.runs.forEach((r, j) => {
    n++;
    if (secs[i].cmds[j] !== "$ " + r.command || !out.includes("$ " + r.command + "\n")) cmdsOk = false;
    if (r.output && (!secs[i].outs.includes(r.output) || !out.includes(r.output))) outsOk = false;
  }));
  check(`tour: every command line (${n}) shown as the terminal showed it`, cmdsOk);
  check("tour: every run's output shown as printed", outsOk);
  const views = secs.map((s) => s.views);
  check("tour: the views of the steps", JSON.stringify(views) === "[1,1,1,1,1,1,1,1,1,0,1,0,1,1,3,1,1,1]", JSON.stringify(views));
  // every step that shows a figure shows it as a view now: no pictures
  const pic = await page.evaluate(() => document.querySelectorAll("section.tour-step img[data-picture]").length);
  check("tour: no step shows a picture, each its view", pic === 0, pic);
  // the first view: multihead's cell; hover against the tour's own data
  const W = flat(data.steps[5].runs[1].view.attention_weights);
  const t = await hover(page, "example 1 head 3", 2, 1);
  checkWeight("tour: hover in the multihead view", t, W[((1 * 5 + 2) * 4 + 2) * 6 + 1]);
  // a train view's slider: its own keys
  const sliders = await page.$$('.tour-view input[type="range"]');
  const nSliders = sliders.length;
  check("tour: a slider for each training view (circuits: both runs on one)", nSliders >= 6, nSliders);
  const circuit = await page.evaluate(() => Array.from(document.querySelectorAll("section.tour-step")[15].querySelectorAll("canvas[data-panel]"), (c) => c.dataset.panel));
  check("tour: circuits shows one layer and both layers of the stack", circuit.includes("1 layer layer 1 head 1") &&
        circuit.includes("2 layers layer 2 head 4") && circuit.length === 3 * 4, circuit.join(", "));
  await sliders[0].focus();
  const v0 = await sliders[0].evaluate((e) => e.value);
  const u0 = await sliders[1].evaluate((e) => e.value);
  await page.keyboard.press("ArrowLeft");
  const v1 = await sliders[0].evaluate((e) => e.value);
  const v2 = await sliders[1].evaluate((e) => e.value);
  check("tour: ← moves the focused slider only", Number(v1) === Number(v0) - 1 && v2 === u0, `${v0} ${v1} ${v2}`);
  await tourLive(page, data, views, nSliders);
  await p.finish();
};

// The tour's controls (SPEC §14 on each step): a panel above each view,
// each rerunning its own run's command.
async function tourLive(page, data, views, nSliders) {
  const ok = await page.evaluate(() => window.attn.ready.then(() => true, (e) => e.message));
  check("tour: window.attn.ready", ok === true, ok);
  const panels = await page.evaluate(() => Array.from(document.querySelectorAll("section.tour-step"), (s) =>
    Array.from(s.querySelectorAll(".live"), (p) => {
      const line = p.querySelector(".attn-command");
      return {key: p.dataset.key, id: line.id, line: line.textContent, h: p.querySelector("h3").textContent,
              below: p.nextElementSibling ? p.nextElementSibling.className : null,
              options: Array.from(p.querySelectorAll("[data-attn-option]"), (c) => c.dataset.attnOption)};
    })));
  // the sweep's view (step 4) has no panel: selfattn's controls are not its
  // options; nor the ViT's (step 18): its picks rerun attn vit, not the training
  const withPanels = views.map((v, i) => (["scaling", "vit"].includes(data.steps[i].name) ? 0 : v));
  check("tour: a panel of controls above each view", JSON.stringify(panels.map((s) => s.length)) === JSON.stringify(withPanels) &&
        panels.flat().every((q) => q.below === "tour-view" && q.h === "Change the inputs"),
        JSON.stringify(panels.map((s) => s.map((q) => q.below))));
  // each panel's line: its run's command without the files it writes
  let linesOk = true;
  data.steps.forEach((st, i) => st.runs.filter((r) => r.view && !["scale_sweep", "vit"].includes(r.view.page.kind)).forEach((r, j) => {
    const want = r.command.replace(/ --(png|plot|weights-png|similarity) \S+/g, "");
    const q = panels[i][j];
    if (!q || q.line !== want || q.key !== `step-${st.number}-run-${st.runs.indexOf(r) + 1}` ||
        q.id !== "attn-command-" + q.key || q.options[0] !== LIVE_FIRST_OPTION[r.view.command]) {
      linesOk = false;
      console.log(`     step ${st.number}: ${JSON.stringify(q)} vs ${want}`);
    }
  }));
  check("tour: each panel's command line is its run's, without the files it writes", linesOk);
  const ids = await page.evaluate(() => {
    const all = Array.from(document.querySelectorAll("[id]"), (e) => e.id);
    return {n: all.length, unique: new Set(all).size, lines: document.querySelectorAll(".attn-command").length,
            single: document.getElementById("attn-command") !== null};
  });
  check("tour: every id is unique (the command lines attn-command-KEY, no #attn-command)",
        ids.n === ids.unique && ids.lines === panels.flat().length && !ids.single, JSON.stringify(ids));

  // window.attn.run on argv no step was written for: the CLI's bytes
  for (const other of [["selfattn", "--tokens", "苹果 很 好吃|苹果 发布 新的 产品", "--hiddens", "8", "--heads", "4", "--causal", "--seed", "7"],
                       ["posenc", "--dim", "16", "--steps", "10", "--layout", "concat", "--check-relative", "2"]]) {
    const got = await page.evaluate((a) => window.attn.run(a), other);
    const want = attnRaw([...other, "--json", "-"]);
    check(`tour: attn.run(${other.join(" ")}) = the CLI's --json, byte for byte`,
          want.code === 0 && got === want.out, `${got.length} vs ${want.out.length} bytes`);
  }

  // a control of step 8 (context): that view drawn again, no other
  const redrawn = () => Array.from(document.querySelectorAll(".tour-view"), (v) =>
    `${v.closest("section").dataset.step}:${v.dataset.redrawn || 0}`).join(" ");
  const before = await page.evaluate(redrawn);
  const heads = await page.$('section[data-step="context"] .live [data-attn-option="--heads"]');
  await heads.fill("4");
  await heads.dispatchEvent("change");
  const done = await until(page, () => Number(document.querySelector('section[data-step="context"] .live').dataset.runs || 0) > 0, 60000);
  check("tour: moving context's --heads reruns", done);
  const after = await page.evaluate(redrawn);
  check("tour: the context view is drawn again, and no other", after === before.replace("context:0", "context:1") && after !== before,
        `${before} → ${after}`);
  const st = await page.evaluate(() => {
    const sec = document.querySelector('section[data-step="context"]');
    return {line: sec.querySelector(".attn-command").textContent, error: sec.querySelector(".live-status").dataset.error,
            summary: sec.querySelector(".live").parentElement.querySelector("summary").textContent,
            panels: Array.from(sec.querySelectorAll(".tour-view canvas[data-panel]"), (c) => c.dataset.panel),
            view: attnPage.data.steps[7].runs[0].view, kind: attnPage.state.kind};
  });
  check("tour: context's line has --heads 4, its summary too", st.error === undefined && st.kind === "tour" &&
        st.line === "attn selfattn --tokens '苹果 很 好吃|苹果 发布 了 新的 产品' --hiddens 16 --heads 4" &&
        st.summary === "explore: " + st.line, JSON.stringify([st.line, st.summary, st.error, st.kind]));
  check("tour: context's view shows four heads", st.panels.includes("example 1 head 4") && !st.panels.includes("example 1 head 5"),
        st.panels.join(", "));
  const again = nativePageData(shellSplit(st.line).slice(1));
  delete again.page.command;
  delete st.view.page.command;
  check("tour: context's line run here gives its view's new data", JSON.stringify(again) === JSON.stringify(st.view));
  const W = flat(again.attention_weights);
  const t = await hover(page, "example 1 head 4", 2, 1, 'section[data-step="context"]');
  checkWeight("tour: hover in the redrawn context view", t, W[((1 * 4 + 3) * 5 + 2) * 5 + 1]);

  // a training step's controls: in the worker, with its progress
  const learned = 'section[data-step="learned"] .live[data-key="step-15-run-1"]';
  await page.evaluate((sel) => {
    const status = document.querySelector(sel + " .live-status");
    window.tourStatusLog = [];
    new MutationObserver(() => window.tourStatusLog.push(status.textContent))
      .observe(status, {childList: true, characterData: true, subtree: true});
  }, learned);
  const steps = await page.$(learned + ' [data-attn-option="--steps"]');
  await steps.fill("40");
  await steps.dispatchEvent("change");
  const trained = await until(page, (sel) => Number(document.querySelector(sel).dataset.runs || 0) > 0, 120000, learned);
  check("tour: moving learned's --steps trains again", trained);
  const tr = await page.evaluate((sel) => ({
    log: window.tourStatusLog, line: document.querySelector(sel + " .attn-command").textContent,
    error: document.querySelector(sel + " .live-status").dataset.error,
    view: attnPage.data.steps[14].runs[0].view}), learned);
  check("tour: the training shows its progress from the worker",
        tr.log.some((l) => /^step 20\/40: loss /.test(l)) && tr.error === undefined, JSON.stringify(tr.log));
  const after2 = await page.evaluate(redrawn);
  check("tour: the first training view is drawn again, not the step's two others",
        after2 === after.replace(/learned:0/, "learned:1"), `${after} → ${after2}`);
  const againT = nativePageData(shellSplit(tr.line).slice(1));
  delete againT.page.command;
  delete tr.view.page.command;
  check("tour: learned's line run here gives its view's new data",
        tr.line === "attn train --task reverse --steps 40" && JSON.stringify(againT) === JSON.stringify(tr.view), tr.line);
  // the redrawn view's slider has its keys, and the others theirs
  const sl = await page.$$('.tour-view input[type="range"]');
  const own = await page.$$('section[data-step="learned"] .tour-view input[type="range"]');
  const first = await Promise.all(sl.map((e) => e.evaluate((x, o) => x === o, own[0])));
  sl.unshift(sl.splice(first.indexOf(true), 1)[0]); // learned's first, then the others
  check("tour: still a slider for each training view", sl.length === nSliders && first.includes(true), sl.length);
  const last = await sl[0].evaluate((e) => e.max);
  await sl[0].focus();
  await page.keyboard.press("Home");
  const vals = await Promise.all(sl.map((e) => e.evaluate((x) => x.value)));
  check("tour: Home moves the redrawn slider only", vals[0] === "0" && Number(last) === againT.page.runs[0].steps.length - 1 &&
        vals.slice(1).every((v) => v !== "0"), JSON.stringify(vals));

  // complexity's timed layers: unset, --measure takes its sweep with it (attn
  // refuses --sweep alone); set again, gives it back, and times in the worker
  const cx = 'section[data-step="complexity"] .live';
  const cxState = () => page.evaluate((sel) => {
    const panel = document.querySelector(sel);
    return {runs: Number(panel.dataset.runs || 0), line: panel.querySelector(".attn-command").textContent,
            error: panel.querySelector(".live-status").dataset.error,
            charts: Array.from(panel.nextElementSibling.querySelectorAll("[data-chart]"), (c) => c.dataset.chart),
            redrawn: panel.nextElementSibling.dataset.redrawn, view: attnPage.data.steps[8].runs[0].view};
  }, cx);
  const measure = await page.$(cx + ' [data-attn-option="--measure"]');
  await measure.uncheck();
  await until(page, (sel) => Number(document.querySelector(sel).dataset.runs || 0) > 0, 60000, cx);
  const c1 = await cxState();
  const plain = nativePageData(shellSplit(c1.line).slice(1));
  delete plain.page.command;
  delete c1.view.page.command;
  check("tour: complexity without --measure: its sweep goes too, the view has no timings",
        c1.line === "attn complexity" && c1.error === undefined && c1.redrawn === "1" && !c1.charts.includes("measured") &&
        !c1.view.measure && JSON.stringify(plain) === JSON.stringify(c1.view), JSON.stringify([c1.line, c1.error, c1.charts]));
  await measure.check();
  const timed = await until(page, (sel) => Number(document.querySelector(sel).dataset.runs || 0) > 1, 180000, cx);
  const c2 = await cxState();
  check("tour: complexity with --measure again: its sweep back, the layers timed",
        timed && c2.line === "attn complexity --measure --sweep 64:2048 --measure-dim 32 --reps 3" && c2.error === undefined &&
        c2.redrawn === "2" && c2.charts.includes("measured") && c2.view.measure && c2.view.measure.n.length === 6,
        JSON.stringify([c2.line, c2.error, c2.charts]));
}
// The first control of each command's panel (live.js's LIVE_CONTROLS)
const LIVE_FIRST_OPTION = {heatmap: "--eye", multihead: "--queries", selfattn: "--tokens", complexity: "--n",
                           posenc: "--dim", train: "--task", pool: "--method", score: "--valid-lens"};


// ---- live: the page's own attn (SPEC §14) -----------------------------------

// attn ARGV --json - on this machine, and its exit status and error line
function attnRaw(args, env, input) {
  try {
    return {code: 0, out: execFileSync(ATTN, args, {cwd: TMP, encoding: "utf8", maxBuffer: 1 << 28,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], input,
      env: Object.assign({}, process.env, env || {})})};
  } catch (e) {
    return {code: e.status, out: e.stdout, err: String(e.stderr).replace(/\n+$/, "")};
  }
}
// The page data attn writes for argv (ATTN_PAGE_DATA, cmd/page_out.h)
function nativePageData(argv) {
  const file = tmp("page-data.json");
  const fd = fs.openSync(file, "w");
  try {
    execFileSync(ATTN, [...argv, "--html", "-"], {cwd: TMP, stdio: ["ignore", "ignore", "pipe", fd],
      env: Object.assign({}, process.env, {ATTN_PAGE_DATA: "3"})});
  } finally {
    fs.closeSync(fd);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

// Each kind of page: [the page's command, argv it was not written for,
// the control moved and its new value, and optionally {prepare: commands
// run first, stdin: a file of TMP given as attn.run's standard input}].
const LIVE_PAGES = [
  ["multihead", ["multihead"], ["multihead", "--heads", "2", "--hiddens", "8", "--queries", "3", "--valid-lens", "1,3"], "--heads", "4"],
  ["selfattn", ["selfattn", "--tokens", "I love attention"], ["selfattn", "--tokens", "a b c d e", "--posenc", "--heads", "2", "--hiddens", "16"], "--heads", "2"],
  ["posenc", ["posenc"], ["posenc", "--dim", "16", "--steps", "20", "--rope", "--check-relative", "3"], "--dim", "8"],
  ["complexity", ["complexity"], ["complexity", "--n", "50", "--d", "64", "--k", "5"], "--n", "400"],
  ["pool", ["pool"], ["pool", "--method", "nonparametric", "--kernel", "boxcar", "--sigma", "0.5,2"], "--sigma", "0.2"],
  ["score", ["score"], ["score", "--score", "dot", "--seed", "3", "--valid-lens", "2,4"], "--valid-lens", "3,5"],
  ["heatmap", ["heatmap", "--eye", "5"], ["heatmap", "--eye", "3", "--titles", "I"], "--eye", "7"],
  ["train", ["train", "--task", "reverse", "--steps", "60"], ["train", "--task", "previous", "--steps", "20"], "--steps", "40"],
  // the page holds its model: another sentence, read from standard input
  ["translate", ["translate", "--input", "model.json", "the big red dog sees a cat ."],
   ["translate", "--input", "-", "--all", "a small cat wants the apple ."], "SENTENCE", "the green apple sees a dog .",
   {prepare: [["train", "--task", "translate", "--steps", "20", "--save", "model.json"]], stdin: "model.json"}],
];

groups.live = async () => {
  for (const [name, argv, other, option, value, extra] of LIVE_PAGES) {
    for (const args of (extra && extra.prepare) || []) attn(args);
    const stdin = extra && extra.stdin ? fs.readFileSync(tmp(extra.stdin), "utf8") : undefined;
    const file = tmp(name + "-live.html");
    attn([...argv, "--html", file]);
    const html = fs.readFileSync(file, "utf8");
    check(`${name}: the page carries attn`, html.includes('id="attn-module"'));
    check(`${name}: CSP allows wasm and blob workers, nothing remote`,
          /script-src 'unsafe-inline' 'wasm-unsafe-eval'; worker-src blob: data:;/.test(html) && /default-src 'none'/.test(html));
    const p = await open(file, name + "-live");
    const {page} = p;
    const t0 = Date.now();
    const ok = await page.evaluate(() => window.attn.ready.then(() => true, (e) => e.message));
    check(`${name}: window.attn.ready`, ok === true, ok);
    // the times are reported, never asserted (scripts/bench measures the budgets)
    const ready = await page.evaluate(() => attnPage.moduleMs);
    console.log(`     ${name}: module ready ${ready.toFixed(0)} ms after navigation`);
    // argv the page was not written for: the CLI's bytes
    const got = await page.evaluate(([a, s]) => window.attn.run(a, {stdin: s}), [other, stdin]);
    const want = attnRaw([...other, "--json", "-"], {}, stdin);
    check(`${name}: attn.run(${other.join(" ")}) = the CLI's --json, byte for byte`,
          want.code === 0 && got === want.out, `${got.length} vs ${want.out.length} bytes`);
    // a failing run: attn's line and exit status
    const bad = [name === "heatmap" ? "heatmap" : argv[0], "--bogus-option"];
    const err = await page.evaluate((a) => window.attn.run(a).then(() => null, (e) => ({message: e.message, code: e.code})), bad);
    const werr = attnRaw([...bad, "--json", "-"]);
    check(`${name}: a failing run rejects with attn's line and code`,
          err && err.message === werr.err && err.code === werr.code, JSON.stringify(err) + " vs " + werr.err);
    if (name === "score") { // a row per scoring function, a panel per example, each masked by its length
      const w = flat(nativePageData(argv).results[1].attention_weights); // dot, (2, 1, 10)
      const kept = await hover(page, "dot example 1", 0, 5), masked = await hover(page, "dot example 0", 0, 2);
      checkWeight("score: dot, example 1, key 5 (valid_len 6)", kept, w[10 + 5]);
      check("score: dot, example 0, key 2 is masked (valid_len 2)", masked.includes("masked (valid_len 2)") &&
            !kept.includes("masked"), masked);
    }
    // a control: the views drawn again, and the command that reproduces them
    const control = await page.$(`[data-attn-option="${option}"]`);
    check(`${name}: a control for ${option}`, control !== null);
    if (control) {
      const runs0 = await page.evaluate(() => Number(document.querySelector(".live").dataset.runs || 0));
      if (!(await moveCompound(control, value))) {
        await control.fill(value);
        await control.dispatchEvent("change");
      }
      const done = await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n, 60000, runs0);
      check(`${name}: moving ${option} reruns`, done);
      const state = await page.evaluate(() => ({
        command: document.getElementById("attn-command").textContent,
        error: document.querySelector(".live-status").dataset.error,
        redrawn: document.querySelector(".live-views").dataset.redrawn,
        data: attnPage.data,
      }));
      check(`${name}: the views drawn again`, state.redrawn === "1" && state.error === undefined,
            JSON.stringify([state.redrawn, state.error]));
      const words = shellSplit(state.command);
      check(`${name}: #attn-command has ${option} ${value}`, words[0] === "attn" &&
            (option === "SENTENCE" ? words[words.length - 1] === value
                                   : words.join(" ").includes(`${option} ${value}`)), state.command);
      const again = nativePageData(words.slice(1));
      delete again.page.command;
      delete state.data.page.command;
      if (again.model) { // the file it names: model.json here, "-" (standard input) in the page
        delete again.model.file;
        delete state.data.model.file;
      }
      check(`${name}: #attn-command run here gives the page's data`,
            JSON.stringify(again) === JSON.stringify(state.data));
    }
    console.log(`     ${name}: checked in ${Date.now() - t0} ms`);
    await p.finish();
  }
  // a flag the command would ignore: train's --no-posenc on a translation
  // page is turned off and says why; on another task it is there to use
  for (const [task, off] of [["translate", true], ["apple", false]]) {
    const file = tmp(`train-${task}-flags.html`);
    attn(["train", "--task", task, "--steps", "2", "--html", file]);
    const p = await open(file, `train-${task}-flags`);
    const got = await p.page.evaluate(() => attn.ready.then(() => {
      const box = document.getElementById("attn-opt-no-posenc");
      return box && {disabled: box.disabled, why: box.closest("label").title};
    }));
    check(`train --task ${task}: "without P" ${off ? "turned off, saying why" : "there to use"}`,
          got && got.disabled === off && (got.why !== "") === off, JSON.stringify(got));
    await p.finish();
  }
};

// the words of a line of plain and '…' words
function shellSplit(line) {
  const out = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  let m;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]);
  return out;
}

// More groups, each in a file group_NAME.js beside this one:
// module.exports = (h) => ({NAME: async () => {...}}), h holding this
// file's helpers (check, near, attn, attnRaw, tmp, open, hover, ...).
const helpers = {check, near, attn, attnRaw, nativePageData, tmp, readJSON, pageData, flat, open, cellPoint,
                 hover, tooltipText, tooltipWeight, checkWeight, shellSplit, until, TMP, ATTN, SHOTS};
for (const f of fs.readdirSync(__dirname).filter((n) => /^group_[a-z_]+\.js$/.test(n)).sort())
  Object.assign(groups, require(path.join(__dirname, f))(helpers));

async function main() {
  if (!groups[GROUP]) {
    console.log("unknown group " + GROUP + "; known: " + Object.keys(groups).join(", "));
    process.exit(2);
  }
  const profile = await launch();
  try {
    await groups[GROUP]();
  } catch (e) {
    check(GROUP + ": ran to the end", false, e.stack);
  } finally {
    await browser.close();
    fs.rmSync(profile, {recursive: true, force: true});
    fs.rmSync(TMP, {recursive: true, force: true});
  }
  console.log(`${count - failed.length} of ${count} checks passed`);
  process.exit(failed.length ? 1 : 0);
}
main();
