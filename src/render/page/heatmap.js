// heatmap.js — one heatmap panel on a canvas, drawn in one ImageData put
// (a 512 × 512 panel is 262,144 pixels, not elements), with token labels
// as text around it, a hover tooltip, a highlighted cell moved by the
// arrow keys, and a colour bar shared by the panels of a view.

// Colours as 32-bit pixels (little-endian RGBA), entry i of a colour map.
function lut32(lut) {
  const out = new Uint32Array(256);
  for (let i = 0; i < 256; i++)
    out[i] = (255 << 24 | lut[3 * i + 2] << 16 | lut[3 * i + 1] << 8 | lut[3 * i]) >>> 0;
  return out;
}
const HATCH_DARK = (255 << 24 | 0x90 << 16 | 0x90 << 8 | 0x90) >>> 0;  // masked keys: grey
const HATCH_LIGHT = (255 << 24 | 0xe4 << 16 | 0xe4 << 8 | 0xe4) >>> 0; // stripes
const FRAME = (255 << 24 | 0xc0 << 16 | 0x6a << 8 | 0x1d) >>> 0;       // a framed cell's edge: blue

// The size of a cell in pixels for a panel of rows × cols within about
// `room` pixels, at least 1 and at most `most`.
function cellSize(rows, cols, room, most) {
  return Math.max(1, Math.min(most, Math.floor(room / Math.max(rows, cols))));
}

// The colour-map entry of v on the scale vmin … vmax, span = vmax − vmin
// (1 when they are equal): matplotlib's rule, and the C's of a preview
// (render/page_preview.c).
function entryOf(v, vmin, span) {
  const t = (v - vmin) / span;
  return !(t > 0) ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
}
const hatchAt = (x, y) => ((x + y) % 6 < 2 ? HATCH_DARK : HATCH_LIGHT);

// Paint values[off + r·cols + c] (rows × cols) into canvas, cw × ch px per
// cell; masked(r, c) cells striped grey: a masked key is not a small weight;
// framed(r, c) cells (e.g. the word a target word translates) get a blue
// edge two pixels wide, their middle in the colour of their value. masked
// and framed may be null (nothing is: each cell is then one fill).
function paintHeatmap(canvas, values, off, rows, cols, cw, ch, colors, vmin, vmax, masked, framed) {
  const w = cols * cw, h = rows * ch;
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  const px = new Uint32Array(img.data.buffer);
  const span = vmax > vmin ? vmax - vmin : 1;
  const plain = !masked && !(framed && cw >= 6 && ch >= 6);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const col = colors[entryOf(values[off + r * cols + c], vmin, span)];
      if (plain) { // one colour a cell
        for (let y = r * ch; y < (r + 1) * ch; y++) px.fill(col, y * w + c * cw, y * w + (c + 1) * cw);
        continue;
      }
      const hide = masked && masked(r, c);
      const edge = framed && cw >= 6 && ch >= 6 && framed(r, c) ? 2 : 0;
      for (let y = r * ch; y < (r + 1) * ch; y++) {
        const row = y * w, ey = y - r * ch < edge || (r + 1) * ch - y <= edge;
        for (let x = c * cw; x < (c + 1) * cw; x++)
          px[row + x] = ey || x - c * cw < edge || (c + 1) * cw - x <= edge ? FRAME
                      : hide ? hatchAt(x, y) : col;
      }
    }
  }
  ctx.putImageData(img, 0, 0);
}

// Pixel p of m over n cells covers the cells [p·n/m, (p+1)·n/m): the
// pairs (pixel, cell) that overlap, in order, and each overlap's length in
// cells (its share) — the area weights of matplotlib's downsampling by
// area. At most n + m − 1 pairs.
function areaPairs(n, m) {
  const pix = [], cell = [], share = [];
  for (let p = 0; p < m; p++) {
    const a = p * n / m, b = (p + 1) * n / m;
    for (let i = Math.floor(a); i < b && i < n; i++) {
      pix.push(p);
      cell.push(i);
      share.push(Math.min(i + 1, b) - Math.max(i, a));
    }
  }
  return {pix: Int32Array.from(pix), cell: Int32Array.from(cell), share: Float64Array.from(share)};
}

// out[o + p] += the share-weighted sum of values[base + cell] over pixel
// p's pairs, for every pair not masked(cell); with open, the shares summed
// too (the part of each pixel not masked).
function pairSums(out, open, o, values, base, P, masked) {
  const pix = P.pix, cell = P.cell, share = P.share;
  for (let j = 0; j < pix.length; j++) {
    if (masked && masked(cell[j])) continue;
    out[o + pix[j]] += share[j] * values[base + cell[j]];
    if (open) open[o + pix[j]] += share[j];
  }
}

// out (m, w) += the pairs of P applied to the rows of rows (n, w): row p
// of out gets row `cell` times its share, for each of p's pairs.
function pairRows(out, rows, w, P) {
  const pix = P.pix, cell = P.cell, share = P.share;
  for (let j = 0; j < pix.length; j++) {
    const to = pix[j] * w, from = cell[j] * w, s = share[j];
    for (let x = 0; x < w; x++) out[to + x] += s * rows[from + x];
  }
}

// out (ph, pw) = the area means of values[off …] (rows × cols) over a grid of
// ph × pw pixels: across each row of cells first, then down. With
// masked(r, c), the mean of the cells that are not masked, and frac (ph,
// pw) the share of the pixel that is.
function areaMeans(values, off, rows, cols, ph, pw, masked) {
  const X = areaPairs(cols, pw), Y = areaPairs(rows, ph);
  const hs = new Float64Array(rows * pw), hm = masked ? new Float64Array(rows * pw) : null;
  for (let r = 0; r < rows; r++) // across: row r of cells into pw sums
    pairSums(hs, hm, r * pw, values, off + r * cols, X, masked && ((c) => masked(r, c)));
  const sum = new Float64Array(ph * pw), open = masked ? new Float64Array(ph * pw) : null;
  pairRows(sum, hs, pw, Y); // down: those rows into ph rows
  if (open) pairRows(open, hm, pw, Y);
  const area = (rows / ph) * (cols / pw), frac = masked ? new Float64Array(ph * pw) : null;
  for (let i = 0; i < ph * pw; i++) {
    if (!masked) sum[i] /= area;
    else {
      frac[i] = 1 - open[i] / area;
      sum[i] = open[i] > 0 ? sum[i] / open[i] : 0;
    }
  }
  return {out: sum, frac};
}

// Paint values (rows × cols) as a thumbnail of pw × ph pixels: each pixel
// the colour of its cells' area mean; striped grey where more than half
// of it is masked.
function paintThumb(canvas, values, off, rows, cols, pw, ph, colors, vmin, vmax, masked) {
  if (canvas.width !== pw) canvas.width = pw;
  if (canvas.height !== ph) canvas.height = ph;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(pw, ph);
  const px = new Uint32Array(img.data.buffer);
  const span = vmax > vmin ? vmax - vmin : 1;
  const {out, frac} = areaMeans(values, off, rows, cols, ph, pw, masked);
  for (let y = 0; y < ph; y++)
    for (let x = 0; x < pw; x++) {
      const i = y * pw + x;
      px[i] = frac && frac[i] > 0.5 ? hatchAt(x, y) : colors[entryOf(out[i], vmin, span)];
    }
  ctx.putImageData(img, 0, 0);
}

// Paint a preview's grid (gr × gc colour-map entries, index[off …]) into
// canvas, one pixel a block; blocks whose cells are more than half masked
// (maskedShare(i, j) > 0.5, when given) striped grey.
function paintIndex(canvas, index, off, gr, gc, colors, maskedShare) {
  if (canvas.width !== gc) canvas.width = gc;
  if (canvas.height !== gr) canvas.height = gr;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(gc, gr);
  const px = new Uint32Array(img.data.buffer);
  for (let i = 0; i < gr; i++)
    for (let j = 0; j < gc; j++)
      px[i * gc + j] = maskedShare && maskedShare(i, j) > 0.5 ? hatchAt(j, i) : colors[index[off + i * gc + j]];
  ctx.putImageData(img, 0, 0);
}

// A tick label's room across its axis (12 px text): a row label's line,
// a turned column label's line; and text that is Chinese or Japanese
// (Han, kana, CJK punctuation, fullwidth forms: base/utf8.c's utf8_is_cjk)
const LABEL_ROW_PX = 16, LABEL_COL_PX = 15;
const CJK_TEXT = /[\u3001-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff01-\uff60]/;

// Label every step-th cell of `cell` px so that labels of `room` px never
// overlap (a long sequence's labels thinned, as a plot's axis ticks,
// whatever the cells' size); 0 (none) on a thumbnail that is not
// o.sparse (a plot's axis).
function labelStep(cell, room, o) {
  if (cell >= room) return 1;
  return o.sparse || !o.thumb ? Math.ceil(room / cell) : 0;
}

// The panels of a grid sized to their token count: n cells a side (the
// longer of queries and keys), `panels` panels in `width` px, each with
// row labels `labelW` px wide. A cell of LABEL_CELL px holds every label;
// shorter sequences share the width, up to CELL_MOST px a cell; a panel
// is at most PANEL_MOST px a side, so a longer sequence's cells are
// smaller and its labels thinned (labelStep); beyond PANEL_MOST cells,
// thumbnails of `room` px (click one to see every cell). The panels of
// a row are balanced over as few lines as fit (4 heads: 2 + 2, not 3 + 1).
// Returns {cell, thumb (0: none), columns}.
const LABEL_CELL = 16, CELL_MOST = 40, PANEL_MOST = 480, PANEL_GAP = 14;
function gridLayout(n, panels, width, labelW) {
  const most = Math.max(120, Math.min(PANEL_MOST, width - labelW - PANEL_GAP));
  if (n > most) { // thumbnails, as many a line as fit
    const room = Math.max(120, Math.min(320, Math.floor(width / panels) - 70));
    return {cell: 1, thumb: room, columns: Math.max(1, Math.min(panels, Math.floor(width / (room + 16))))};
  }
  const share = Math.floor(width / panels) - labelW - PANEL_GAP;
  let cell = Math.min(CELL_MOST, Math.max(LABEL_CELL, Math.floor(share / n)));
  if (n * cell > most) cell = Math.max(1, Math.floor(most / n));
  const fit = Math.max(1, Math.floor((width + PANEL_GAP) / (labelW + n * cell + 2 + PANEL_GAP)));
  const lines = Math.ceil(panels / fit);
  return {cell, thumb: 0, columns: Math.ceil(panels / lines)};
}

// The width in pixels of the widest of labels at 12 px (for the room the
// tick labels take), at most `most`.
let measureCtx = null;
function labelWidth(labels, most) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = "12px system-ui, sans-serif";
  let w = 0;
  for (const t of labels) w = Math.max(w, measureCtx.measureText(t).width);
  return Math.min(most, Math.ceil(w) + 8);
}

// A panel: o = {name, rows, cols, cell (or cellW and cellH), values, offset, colors, vmin, vmax,
// masked(r, c), framed(r, c), describe(r, c, v) → tooltip lines, xt, yt (tick
// labels or null), title, onPick(), thumb}; returns {node, canvas, redraw(values,
// offset), paintPreview(index, off, gr, gc, maskedShare), select(r, c)}.
// thumb (CSS pixels, or 0): the panel is shown that wide, its canvas painted
// at that size (× devicePixelRatio), each pixel the area mean of its cells.
// values may be null until the weights have loaded: nothing is painted (or
// a preview, paintPreview) and describe gets v = null.
function heatPanel(o) {
  const canvas = el("canvas", {"data-panel": o.name, "data-rows": String(o.rows), "data-cols": String(o.cols),
                               tabindex: "0", role: "img",
                               "aria-label": locf("{0} (arrow keys move the highlighted cell)", o.label || o.name)});
  const mark = el("div", {class: "hm-mark", hidden: true});
  const stage = el("div", {class: "hm-stage"}, canvas, mark);
  const p = {node: null, canvas, values: o.values, offset: o.offset || 0, sel: null};
  const cw = o.cellW || o.cell, chh = o.cellH || o.cell;
  const yt = el("div", {class: "hm-yt"}), xt = el("div", {class: "hm-xt"});
  // labels never overlap: every label when a cell holds one, else every
  // k-th, as a plot's axis ticks (no labels on a thumbnail's tiny cells)
  const stepY = labelStep(chh, LABEL_ROW_PX, o), stepX = labelStep(cw, LABEL_COL_PX, o);
  if (stepY && o.yt) {
    yt.style.height = o.rows * chh + "px";
    yt.style.width = (o.ytWidth || labelWidth(o.yt, 96)) + "px";
    o.yt.forEach((t, i) => i % stepY === 0 && yt.append(el("span", {class: "tick", title: t, text: t, "data-i": String(i),
      style: `top:${i * chh + chh / 2 - 8}px;height:16px;line-height:16px`})));
  }
  if (stepX && o.xt) {
    // upright when every label fits its column, else turned a quarter;
    // Chinese or Japanese labels are not turned but stacked, one
    // character under another, as they are written in columns
    const wide = labelWidth(o.xt, 80), upright = wide <= cw;
    const step = upright ? 1 : stepX;
    const stacked = (t) => !upright && CJK_TEXT.test(t), chars = (t) => Math.min(6, [...t].length);
    const tall = o.xt.reduce((m, t) => Math.max(m, stacked(t) ? chars(t) * 13 + 4 : 0), 0);
    xt.style.width = o.cols * cw + "px";
    xt.style.height = (upright ? 18 : Math.max(wide + 4, tall)) + "px";
    xt.classList.toggle("upright", upright);
    o.xt.forEach((t, i) => i % step === 0 && xt.append(el("span", {
      class: stacked(t) ? "tick stacked" : "tick", title: t, "data-i": String(i),
      text: stacked(t) ? [...t].slice(0, chars(t)).join("\n") : t, // a character a line
      style: upright ? `left:${i * cw}px;width:${cw}px` : `left:${i * cw + cw / 2}px`})));
  }
  p.node = el("figure", {class: "hm"}, o.title ? el("figcaption", {text: o.title}) : null,
              el("div", {class: "hm-grid"}, yt, stage, el("div"), xt));

  const W = o.cols * cw, H = o.rows * chh; // the cells' drawing, in pixels
  if (o.thumb) canvas.style.width = o.thumb + "px";
  p.redraw = (values, offset) => {
    p.values = values;
    p.offset = offset || 0;
    if (!values) return;
    // a thumbnail's pixels: its displayed width (inside the border, once
    // in the page) × the device's pixel ratio, the height in proportion;
    // all the cells when they are fewer
    const shown = o.thumb ? canvas.clientWidth || o.thumb : 0, dpr = window.devicePixelRatio || 1;
    const tw = Math.max(1, Math.round(shown * dpr)), th = Math.max(1, Math.round(shown * dpr * H / W));
    if (o.thumb && (tw < W || th < H))
      paintThumb(canvas, values, p.offset, o.rows, o.cols, tw, th, o.colors, o.vmin, o.vmax, o.masked);
    else paintHeatmap(canvas, values, p.offset, o.rows, o.cols, cw, chh, o.colors, o.vmin, o.vmax, o.masked, o.framed);
  };
  p.paintPreview = (index, off, gr, gc, maskedShare) => paintIndex(canvas, index, off, gr, gc, o.colors, maskedShare);
  p.value = (r, c) => (p.values ? p.values[p.offset + r * o.cols + c] : null);
  p.select = (r, c, evt) => {
    r = Math.max(0, Math.min(o.rows - 1, r));
    c = Math.max(0, Math.min(o.cols - 1, c));
    p.sel = [r, c];
    // CSS pixels a canvas pixel of the cells' drawing (whatever the
    // canvas's own size: a thumbnail's or a preview's)
    const k = canvas.clientWidth / W || 1, edge = canvas.clientLeft;
    mark.hidden = false;
    mark.style.cssText = `left:${edge + c * cw * k - 1}px;top:${edge + r * chh * k - 1}px;` +
      `width:${Math.max(2, cw * k)}px;height:${Math.max(2, chh * k)}px`;
    const b = canvas.getBoundingClientRect();
    const x = evt ? evt.clientX : b.left + edge + (c + 1) * cw * k;
    const y = evt ? evt.clientY : b.top + edge + (r + 1) * chh * k;
    tooltip.show(o.describe(r, c, p.value(r, c)), x, y);
    attnPage.state.selected = {panel: o.name, row: r, col: c};
    if (o.onSelect) o.onSelect(r, c);
  };
  // the cell under the mouse: its place inside the border, as a share of
  // the canvas's width and height (whatever the canvas's own size)
  const cellOf = (e) => {
    const b = canvas.getBoundingClientRect();
    const x = (e.clientX - b.left - canvas.clientLeft) / canvas.clientWidth;
    const y = (e.clientY - b.top - canvas.clientTop) / canvas.clientHeight;
    return [Math.floor(y * o.rows), Math.floor(x * o.cols)];
  };
  // pointermove: its coordinates have fractions (mousemove's are whole
  // pixels), so that a thumbnail's every cell can be under the pointer
  canvas.addEventListener("pointermove", (e) => {
    const [r, c] = cellOf(e);
    if (r >= 0 && r < o.rows && c >= 0 && c < o.cols) p.select(r, c, e);
  });
  canvas.addEventListener("mouseleave", () => { tooltip.hide(); mark.hidden = true; });
  canvas.addEventListener("click", () => { if (o.onPick) o.onPick(p); });
  canvas.addEventListener("keydown", (e) => {
    const moves = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
    if (moves[e.key] && !e.altKey && !e.ctrlKey) {
      e.preventDefault();
      e.stopPropagation();
      const [r, c] = p.sel || [0, 0];
      p.select(p.sel ? r + moves[e.key][0] : 0, p.sel ? c + moves[e.key][1] : 0);
    } else if (e.key === "Enter" && o.onPick) {
      o.onPick(p);
    }
  });
  canvas.addEventListener("blur", () => { tooltip.hide(); });
  p.redraw(o.values, o.offset);
  return p;
}

// A vertical colour bar for vmin … vmax, with five ticks.
function colorbar(lut, vmin, vmax, label, withMask) {
  const c = el("canvas", {class: "cbar", width: "14", height: "200"});
  const ctx = c.getContext("2d");
  for (let y = 0; y < 200; y++) {
    ctx.fillStyle = cssColor(lut, Math.min(255, Math.floor((199 - y) / 200 * 256)));
    ctx.fillRect(0, y, 14, 1);
  }
  const ticks = el("div", {class: "cbar-ticks"});
  for (let i = 0; i <= 4; i++)
    ticks.append(el("span", {text: fmtShort(vmax - (vmax - vmin) * i / 4), style: `top:${i * 25}%`}));
  return el("div", {class: "cbar-box"}, label ? el("div", {class: "cbar-label", text: label}) : null,
            el("div", {class: "cbar-row"}, c, ticks),
            withMask ? el("div", {class: "cbar-mask"}, el("span", {class: "swatch-mask"}), loc(" masked key")) : null);
}
