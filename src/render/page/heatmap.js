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

// Paint values[off + r·cols + c] (rows × cols) into canvas, cw × ch px per
// cell; masked(r, c) cells striped grey: a masked key is not a small weight;
// framed(r, c) cells (e.g. the word a target word translates) get a blue
// edge two pixels wide, their middle in the colour of their value.
function paintHeatmap(canvas, values, off, rows, cols, cw, ch, colors, vmin, vmax, masked, framed) {
  const w = cols * cw, h = rows * ch;
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  const px = new Uint32Array(img.data.buffer);
  const span = vmax > vmin ? vmax - vmin : 1;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values[off + r * cols + c];
      const hide = masked && masked(r, c);
      let t = (v - vmin) / span, i = !(t > 0) ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
      const col = colors[i];
      const edge = framed && cw >= 6 && ch >= 6 && framed(r, c) ? 2 : 0;
      for (let y = r * ch; y < (r + 1) * ch; y++) {
        const row = y * w, ey = y - r * ch < edge || (r + 1) * ch - y <= edge;
        for (let x = c * cw; x < (c + 1) * cw; x++)
          px[row + x] = ey || x - c * cw < edge || (c + 1) * cw - x <= edge ? FRAME
                      : hide ? ((x + y) % 6 < 2 ? HATCH_DARK : HATCH_LIGHT) : col;
      }
    }
  }
  ctx.putImageData(img, 0, 0);
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
// masked(r, c), framed(r, c), describe(r, c) → tooltip lines, xt, yt (tick
// labels or null), title, onPick()}; returns {node, canvas, redraw(values,
// offset), select(r, c)}.
function heatPanel(o) {
  const canvas = el("canvas", {"data-panel": o.name, "data-rows": String(o.rows), "data-cols": String(o.cols),
                               tabindex: "0", role: "img",
                               "aria-label": o.name + " (arrow keys move the highlighted cell)"});
  const mark = el("div", {class: "hm-mark", hidden: true});
  const stage = el("div", {class: "hm-stage"}, canvas, mark);
  const p = {node: null, canvas, values: o.values, offset: o.offset || 0, sel: null};
  const cw = o.cellW || o.cell, chh = o.cellH || o.cell;
  const yt = el("div", {class: "hm-yt"}), xt = el("div", {class: "hm-xt"});
  // every label when the cells are big enough for one, else (o.sparse)
  // every m-th, as a plot's axis ticks
  const stepY = chh >= 10 ? 1 : o.sparse ? Math.ceil(14 / chh) : 0;
  const stepX = cw >= 10 ? 1 : o.sparse ? Math.ceil(24 / cw) : 0;
  if (stepY && o.yt) {
    yt.style.height = o.rows * chh + "px";
    yt.style.width = (o.ytWidth || labelWidth(o.yt, 96)) + "px";
    o.yt.forEach((t, i) => i % stepY === 0 && yt.append(el("span", {class: "tick", title: t, text: t,
      style: `top:${i * chh + chh / 2 - 8}px;height:16px;line-height:16px`})));
  }
  if (stepX && o.xt) {
    // upright when every label fits its column, else turned a quarter
    const wide = labelWidth(o.xt, 80), upright = wide <= cw * stepX;
    xt.style.width = o.cols * cw + "px";
    xt.style.height = (upright ? 18 : wide + 4) + "px";
    xt.classList.toggle("upright", upright);
    o.xt.forEach((t, i) => i % stepX === 0 && xt.append(el("span", {class: "tick", title: t, text: t,
      style: upright ? `left:${i * cw + cw / 2 - 20}px;width:40px` : `left:${i * cw + cw / 2}px`})));
  }
  p.node = el("figure", {class: "hm"}, o.title ? el("figcaption", {text: o.title}) : null,
              el("div", {class: "hm-grid"}, yt, stage, el("div"), xt));

  p.redraw = (values, offset) => {
    p.values = values;
    p.offset = offset || 0;
    paintHeatmap(canvas, values, p.offset, o.rows, o.cols, cw, chh, o.colors, o.vmin, o.vmax, o.masked, o.framed);
  };
  p.value = (r, c) => p.values[p.offset + r * o.cols + c];
  p.select = (r, c, evt) => {
    r = Math.max(0, Math.min(o.rows - 1, r));
    c = Math.max(0, Math.min(o.cols - 1, c));
    p.sel = [r, c];
    const k = canvas.clientWidth / canvas.width || 1, edge = canvas.clientLeft;
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
  // the cell under the mouse: the canvas's pixels inside its border
  const cellOf = (e) => {
    const b = canvas.getBoundingClientRect(), k = canvas.width / canvas.clientWidth;
    const x = (e.clientX - b.left - canvas.clientLeft) * k, y = (e.clientY - b.top - canvas.clientTop) * k;
    return [Math.floor(y / chh), Math.floor(x / cw)];
  };
  canvas.addEventListener("mousemove", (e) => {
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
            withMask ? el("div", {class: "cbar-mask"}, el("span", {class: "swatch-mask"}), " masked key") : null);
}
