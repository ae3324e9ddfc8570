// common.js — what every view of an attn page shares: reading the data,
// tensors, numbers as attn prints them, colour maps, the tooltip, and
// building elements. The page's scripts are plain files concatenated in
// the order of meson.build (page_js_files); each uses only those before.
//
// Text from the user (tokens, labels) reaches the page through el() and
// textContent only: nothing here or after parses HTML from a string.
"use strict";

// Reports for the tests and for a curious reader: window.attnPage.
const attnPage = {drawMs: null, state: {}, charts: {}};
window.attnPage = attnPage;

// The page's language (SPEC.md §17): the one it was written in (its
// <html lang>), or 中文 when the browser's is; the header's switch changes
// it. loc(s): s in that language, from PAGE_ZH (English when it has none).
// The module speaks it too: langWords() go before the words of each run.
let attnLang = /^zh/i.test(document.documentElement.lang) ||
  /^zh/i.test((navigator.languages && navigator.languages[0]) || navigator.language || "")
  ? "zh" : "en";
attnPage.lang = attnLang;
function loc(s) {
  return attnLang === "zh" && Object.prototype.hasOwnProperty.call(PAGE_ZH, s) ? PAGE_ZH[s] : s;
}
// locf("Head {0}", h + 1): the pattern in the page's language, {0}, {1} …
// replaced by the values (a zh pattern may put them in another order).
function locf(pattern, ...values) {
  return loc(pattern).replace(/\{(\d+)\}/g, (m, i) => String(values[Number(i)]));
}
function langWords() {
  return attnLang === "zh" ? ["--lang", "zh"] : [];
}
// The page's own words in Chinese: controls, headings, buttons, tooltips.
const PAGE_ZH = {
  "(default)": "（默认）",
  "Arrow keys move the highlighted cell; Esc closes.": "方向键移动高亮的单元格；Esc 关闭。",
  "Bahdanau attention: the query the decoder's previous state s(t′−1), keys and values the encoder's states": "Bahdanau 注意力：查询是解码器的上一个状态 s(t′−1)，键和值是编码器的状态",
  "Change the inputs": "改变输入",
  "Copy": "复制",
  "Cross-attention: Q from the decoder, K = V from the encoder": "交叉注意力：Q 来自解码器，K = V 来自编码器",
  "Exercises (练习), each an experiment:": "练习，每一道都是一个实验：",
  "The decoder's self-attention (causal)": "解码器的自注意力（因果）",
  "The encoder's self-attention": "编码器的自注意力",
  "The head view is drawn once the page has read the weights.": "页面读完权重后再画头视图。",
  "The heads' mean has no path of its own: hover a head.": "各头的平均没有自己的计算路径：请悬停在某个头上。",
  "The numbers behind a weight": "一个权重背后的数",
  "This page's data is missing (the file is cut short): only its preview is drawn.": "这个页面的数据缺失（文件被截断）：只画出了预览。",
  "attention shown": "显示的注意力",
  "close": "关闭",
  "columns ": "列 ",
  "columns to plot, e.g. 6-9 or 0,1,4-5": "要画的列，如 6-9 或 0,1,4-5",
  "enlarged panel": "放大的面板",
  "head view: queries on the left, keys on the right": "头视图：左边是查询，右边是键",
  "offset δ": "偏移 δ",
  "pairs": "句对",
  "play": "播放",
  "plot": "画出",
  "positions": "个位置",
  "row shown in the head view": "头视图中显示的行",
  "rows: Row (position) · columns: Column (encoding dimension)": "行：位置 · 列：编码维度",
  "show: ": "显示：",
  "steps": "步数",
  "stop training": "停止训练",
  "test input ": "测试输入 ",
  "test input (query)": "测试输入（查询）",
  "the numbers behind the weight": "权重背后的数",
  "training step": "训练步",
  "weights of": "权重：",
  "■ stop": "■ 停止",
  "▶ play": "▶ 播放",
  "computing…": "计算中…",
  "copied": "已复制",
  "add P": "加上 P",
  "causal": "因果",
  "dim": "维数",
  "epochs": "轮数",
  "eye N": "单位矩阵 N",
  "heads": "头数",
  "hiddens": "隐藏单元",
  "inputs": "输入",
  "kernel": "核",
  "keys": "键",
  "largest d": "最大的 d",
  "layout": "布局",
  "lr": "学习率",
  "method": "方法",
  "q, k pairs per d": "每个 d 的 q、k 对数",
  "queries": "查询",
  "reference": "参考译文",
  "scoring": "评分函数",
  "seed": "种子",
  "self-attention too": "也显示自注意力",
  "sentence": "句子",
  "task": "任务",
  "time the layers": "为各层计时",
  "tokens": "词元",
  "valid lengths": "有效长度",
  "without P": "不加 P",
  "δ of the rotation check": "旋转检验的 δ",
  "Attention weights": "注意力权重",
  "Columns against position": "各列随位置的变化",
  "Cost against n": "代价随 n 的变化",
  "Head view": "头视图",
  "Held-out translations": "留出集上的翻译",
  "Measured": "实测",
  "Positional encoding P": "位置编码 P",
  "Relative position": "相对位置",
  "Results": "结果",
  "The fits, and one query's weights": "拟合，以及一个查询的权重",
  "The probe's alignment at the slider's step": "滑块所在步的探针对齐",
  "Variance of the scores": "评分的方差",
  "language / 语言": "语言 / language",
  "result": "结果",
  "MSE against the truth": "与真实值的均方误差",
  "mean largest weight": "平均最大权重",
  "layer": "层",
  "complexity": "复杂度",
  "multiply-adds": "乘加次数",
  "sequential": "顺序操作",
  "max path": "最大路径",
  "path formula": "路径公式",
  "measured path": "实测路径",
  "of the multiply-adds": "按乘加次数",
  "theory": "理论",
  "held-out BLEU": "留出集 BLEU",
  "exact": "完全正确",
  "alignment": "对齐",
  "ms per step": "每步毫秒数",
  "valid_len {0}": "有效长度 {0}",
  "causal: a key after the query": "因果：键在查询之后",
  "heads averaged": "各头平均",
  "Heads averaged": "各头平均",
  "head {0}": "头 {0}",
  "Head {0}": "头 {0}",
  "query": "查询",
  "key": "键",
  "head": "头",
  "example": "样本",
  "the {0} heads averaged": "{0} 个头的平均",
  "weight: still loading (the page is reading its data)": "权重：仍在加载（页面正在读取数据）",
  "masked ({0}): weight {1} (float32 {2})": "已掩蔽（{0}）：权重 {1}（float32 {2}）",
  "weight {0}   float32 {1}": "权重 {0}   float32 {1}",
  "The weights are still loading: the panel opens when they have.": "权重仍在加载：加载完后面板会打开。",
  "{0} (enlarged)": "{0}（放大）",
  "rows: {0} · columns: {1}": "行：{0} · 列：{1}",
  "weight": "权重",
  "{0}s: ": "{1}：",
  "{0}: click to hide or show": "{0}：点击隐藏或显示",
  "query {0} “{1}”: its lines": "查询 {0} “{1}”：它的连线",
  "key {0} “{1}”: the lines into it": "键 {0} “{1}”：连向它的线",
  "{0} rows": "{0} 行",
  "No controls on this page: its {0} weights are drawn from a preview, and a change would rerun and redraw every one of them, seconds each, not a slider's pace. To change it, rerun the command above with other options. What it offers: every weight on hover, a panel enlarged on click, the head view.": "此页没有控件：它的 {0} 个权重由预览画出，改动会重算并重画每一个，每次数秒，跟不上滑块。要改动，请用别的选项重新运行上面的命令。此页提供：悬停看每个权重，点击放大面板，头视图。",
  "{0} × {1} {2}, {3} {4} × {5} {6}; one colour scale from {7} to {8}. Hover a cell for its weight; click a panel to enlarge it.": "{0} × {1} 个{9}，{3} 个查询 × {5} 个键；同一色标，从 {7} 到 {8}。悬停在单元格上看权重；点击面板放大。",
  "query, key and weight of a cell": "单元格的查询、键和权重",
  "; beside the panels, the numbers behind it": "；面板旁是它背后的数",
  "enlarge a panel": "放大面板",
  "move the highlighted cell (in a focused panel)": "移动高亮的单元格（在获得焦点的面板中）",
  "close the enlarged panel": "关闭放大的面板",
  "Queries on the left, keys on the right; a line's opacity is the weight, one colour per {0}. Click a colour to hide or show its {0}; hover a token to see only its lines.": "左边是查询，右边是键；线的不透明度就是权重，每个{1}一种颜色。点击颜色隐藏或显示该{1}；悬停在词元上只看它的线。",
  "first {0} of ": "前 {0} 个，共 ",
  "masked ({0}): the score becomes": "已掩蔽（{0}）：评分变为",
  "masked": "已掩蔽",
  "not masked: the score stays": "未掩蔽：评分不变",
  "row max m =": "行最大值 m =",
  "weight e^(s − m) / Σ (masked) =": "权重 e^(s − m) / Σ（已掩蔽）=",
  "weight e^(s − m) / Σ =": "权重 e^(s − m) / Σ =",
  "output of query {0}, Σⱼ wⱼ vⱼ": "查询 {0} 的输出，Σⱼ wⱼ vⱼ",
  "Hover a weight, or focus a panel (Tab) and move with the arrow keys: its path from q and k to the weight appears here.": "悬停在某个权重上，或让面板获得焦点（Tab）后用方向键移动：从 q 和 k 到权重的计算路径显示在这里。",
  "computing the path (attn … --explain)…": "计算路径中（attn … --explain）…",
  "{0} (arrow keys move the highlighted cell)": "{0}（方向键移动高亮的单元格）",
  " masked key": " 被掩蔽的键",
  "hover": "悬停",
  "click / Enter": "点击 / Enter",
  "recompute": "重新计算",
  "move the highlighted cell": "移动高亮的单元格",
  "loss {0}": "损失 {0}",
  "Training: {0}": "训练：{0}",
  "fits": "拟合",
  "loss": "损失",
  "chart": "图表",
  "{0} value": "{0} 的值",
  "{0} example {1}": "{0} 样本 {1}",
  "{0} steps": "{0} 步",
  "key size {0}": "键的大小 {0}",
  "query {0} of example {1}": "样本 {1} 的查询 {0}",
  "key {0}": "键 {0}",
  "value {0}": "值 {0}",
  "additive and dot": "加性和点积",
  "default": "默认",
  "layer {0}": "第 {0} 层",
  ".": "。",
  "step {0}": "第 {0} 步",
  "step {0}: {1}": "第 {0} 步：{1}",
  "training loss (the batch's)": "训练损失（该批次的）",
  "the previous or next logged step": "上一个或下一个记录的步",
  "the first or last step": "第一步或最后一步",
  "run through the steps": "依次播放各步",
  "step": "步",
  "row {0}": "第 {0} 行",
  "example {0}": "样本 {0}",
  "ex {0}": "样本 {0}",
  "target word": "目标词",
  "source word": "源词",
  "attention": "注意力",
  "score": "评分",
  "only the additive scorer has hidden units": "只有加性评分函数有隐藏单元",
  "translation: the Transformer always adds P": "翻译：Transformer 总是加上 P",
  "this page was written by an attn built without its WebAssembly module: it shows one run and cannot recompute": "此页由不带 WebAssembly 模块的 attn 写出：只显示一次运行，不能重新计算",
  "the worker failed": "工作线程失败",
  ", ": "、",
  "none: no BLEU": "无：不计算 BLEU",
};

// el("div", {class: "x", text: "…", attrs…}, child…): an element. "text"
// sets textContent; "on" maps events to handlers; the rest are
// attributes, set with setAttribute (never as HTML).
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = String(v);
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

// The page's data: the one JSON element, read once.
function readData() {
  return JSON.parse(document.getElementById("attn-data").textContent);
}

// A tensor of the data as {shape, data: Float32Array}: either
// {"dtype": "float32", "shape", "base64"} (little-endian) or nested arrays.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
function base64Bytes(s) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(s);
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}
function tensor(v) {
  if (v && v.base64 !== undefined) {
    const bytes = base64Bytes(v.base64);
    if (LITTLE_ENDIAN) return {shape: v.shape, data: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)};
    const view = new DataView(bytes.buffer);
    const out = new Float32Array(bytes.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return {shape: v.shape, data: out};
  }
  const shape = [];
  for (let a = v; Array.isArray(a); a = a[0]) shape.push(a.length);
  const flat = Array.isArray(v) ? v.flat(Infinity) : [v];
  return {shape, data: Float32Array.from(flat, (x) => (x === null ? NaN : x))};
}

// A number as C's "%.9g" writes it (attn's --json): enough digits to read
// back the same float32.
function fmtG9(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  const e = Number(v.toExponential(8).split("e")[1]);
  if (e < -4 || e >= 9) {
    let [m, x] = v.toExponential(8).split("e");
    if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
    const n = Number(x);
    return m + "e" + (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(2, "0");
  }
  let s = v.toFixed(Math.max(0, 8 - e));
  if (s.includes(".")) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s;
}

// Four decimals, as attn's printed matrices show a weight.
function fmt4(v) {
  return Number.isFinite(v) ? v.toFixed(4) : String(v);
}

// A short number for axes and tables: 3 significant digits.
function fmtShort(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(1).replace("e+", "e").replace(".0e", "e");
  return String(Number(v.toPrecision(3)));
}

// A colour map of the data, {"name", "lut": 256 entries "rrggbb…"}, as
// bytes: lut[3i … 3i+2] is entry i, the colour of t in [i/256, (i+1)/256).
function colormap(c) {
  const lut = new Uint8Array(768);
  for (let i = 0; i < 768; i++) lut[i] = parseInt(c.lut.substr(2 * i, 2), 16);
  return {name: c.name, lut};
}

// Entry index of value v on the scale vmin … vmax (matplotlib's rule).
function cmapIndex(v, vmin, vmax) {
  const t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
  if (!(t > 0)) return 0;
  if (t >= 1) return 255;
  return Math.min(255, Math.floor(t * 256));
}

function cssColor(lut, i) {
  return `rgb(${lut[3 * i]},${lut[3 * i + 1]},${lut[3 * i + 2]})`;
}

// The one tooltip of the page (role="tooltip"): lines of text near a point.
const tooltip = {
  node: null,
  show(lines, x, y) {
    if (!this.node) {
      this.node = el("div", {role: "tooltip", id: "attn-tooltip", class: "tooltip"});
      document.body.append(this.node);
    }
    this.node.replaceChildren(...lines.map((l, i) => el("div", {class: i ? "" : "tt-head", text: l})));
    this.node.hidden = false;
    const r = this.node.getBoundingClientRect();
    let left = x + 14, top = y + 14;
    if (left + r.width > window.innerWidth - 4) left = Math.max(4, x - r.width - 14);
    if (top + r.height > window.innerHeight - 4) top = Math.max(4, y - r.height - 14);
    this.node.style.left = left + "px";
    this.node.style.top = top + "px";
  },
  hide() {
    if (this.node) this.node.hidden = true;
  },
};

// A section of the page: a heading, an optional note, then its content.
function section(title, note, ...content) {
  return el("section", {class: "view"}, el("h2", {text: loc(title)}),
            note ? el("p", {class: "note", text: loc(note)}) : null, ...content);
}

// Key bindings listed on the page (as coverage.py's report does).
function keysNote(pairs) {
  const dl = el("dl", {class: "keys"});
  for (const [k, what] of pairs) dl.append(el("dt", {}, el("kbd", {text: loc(k)})), el("dd", {text: loc(what)}));
  return dl;
}

// The value of a canvas pixel at (x, y), for the tests: [r, g, b, a].
function pixelAt(canvas, x, y) {
  const one = document.createElement("canvas");
  one.width = one.height = 1;
  const ctx = one.getContext("2d", {willReadFrequently: true});
  ctx.drawImage(canvas, x, y, 1, 1, 0, 0, 1, 1);
  return Array.from(ctx.getImageData(0, 0, 1, 1).data);
}
attnPage.pixelAt = pixelAt;
