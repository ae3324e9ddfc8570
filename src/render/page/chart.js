// chart.js — a line chart on one canvas (uPlot's way: the series drawn in
// one pass from arrays, the cursor redrawn on top): linear or log axes, a
// legend, hover on the nearest point, and an optional vertical cursor.

const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a"];

// Round tick positions for lo … hi: about n of them.
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const step0 = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

// o = {series: [{name, label, x, y, color, dash, points, line, bars}], logx, logy,
// xlabel, ylabel, width, height, xlim and ylim: [lo, hi], clip (the series
// cut at the axes' box), describe(si, i) → lines, name}. A series with points: true has its points drawn as
// circles, line: false none of its line; bars: true draws bars from 0.
// The page shows loc() of the names and axis labels (a series' label, when
// given, in their stead: the name then stays the series' key).
// ch.xAt(clientX): the x value under that point of the screen.
function lineChart(o) {
  const W = o.width || 640, H = o.height || 300, M = {l: 62, r: 16, t: 12, b: 44};
  const canvas = el("canvas", {class: "chart", width: String(W), height: String(H),
                               "data-chart": o.name || "", role: "img", "aria-label": loc(o.label || o.name || "chart")});
  const legend = el("div", {class: "legend"});
  const ch = {node: el("figure", {class: "chart-box", style: `max-width:${W + 2}px`}, canvas, legend), canvas, cursor: null};
  const tx = (v) => (o.logx ? Math.log10(v) : v), ty = (v) => (o.logy ? Math.log10(v) : v);
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const s of o.series)
    for (let i = 0; i < s.x.length; i++) {
      if (!Number.isFinite(s.y[i]) || (o.logy && !(s.y[i] > 0))) continue;
      x0 = Math.min(x0, tx(s.x[i])); x1 = Math.max(x1, tx(s.x[i]));
      y0 = Math.min(y0, ty(s.y[i])); y1 = Math.max(y1, ty(s.y[i]));
    }
  if (o.xlim) { x0 = tx(o.xlim[0]); x1 = tx(o.xlim[1]); }
  if (o.ylim) { y0 = ty(o.ylim[0]); y1 = ty(o.ylim[1]); }
  if (!(x1 > x0)) { x0 -= 1; x1 += 1; }
  if (!(y1 > y0)) { y0 -= 1; y1 += 1; }
  if (!o.ylim) { const pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad; }
  const px = (v) => M.l + (tx(v) - x0) / (x1 - x0) * (W - M.l - M.r);
  const py = (v) => H - M.b - (ty(v) - y0) / (y1 - y0) * (H - M.t - M.b);
  ch.px = px;
  ch.py = py;

  function axisTicks(lo, hi, log) {
    if (!log) return niceTicks(lo, hi, 6).map((v) => [v, v]);
    const out = [];
    for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) if (e >= lo - 1e-9 && e <= hi + 1e-9) out.push([e, Math.pow(10, e)]);
    if (out.length < 2) return niceTicks(lo, hi, 4).map((v) => [v, Math.pow(10, v)]);
    return out;
  }
  function draw() {
    const ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px system-ui, sans-serif";
    ctx.strokeStyle = "#ddd";
    ctx.fillStyle = "#444";
    ctx.lineWidth = 1;
    ctx.textAlign = "center";
    for (const [t, v] of axisTicks(x0, x1, o.logx)) {
      const x = M.l + (t - x0) / (x1 - x0) * (W - M.l - M.r);
      ctx.beginPath(); ctx.moveTo(x, M.t); ctx.lineTo(x, H - M.b); ctx.stroke();
      ctx.fillText(fmtShort(v), x, H - M.b + 16);
    }
    ctx.textAlign = "right";
    for (const [t, v] of axisTicks(y0, y1, o.logy)) {
      const y = H - M.b - (t - y0) / (y1 - y0) * (H - M.t - M.b);
      ctx.beginPath(); ctx.moveTo(M.l, y); ctx.lineTo(W - M.r, y); ctx.stroke();
      ctx.fillText(fmtShort(v), M.l - 6, y + 4);
    }
    ctx.strokeStyle = "#888";
    ctx.strokeRect(M.l, M.t, W - M.l - M.r, H - M.t - M.b);
    ctx.textAlign = "center";
    if (o.xlabel) ctx.fillText(loc(o.xlabel), (M.l + W - M.r) / 2, H - 8);
    if (o.ylabel) {
      ctx.save(); ctx.translate(14, (M.t + H - M.b) / 2); ctx.rotate(-Math.PI / 2);
      ctx.fillText(loc(o.ylabel), 0, 0); ctx.restore();
    }
    if (o.clip) { ctx.save(); ctx.beginPath(); ctx.rect(M.l, M.t, W - M.l - M.r, H - M.t - M.b); ctx.clip(); }
    o.series.forEach((s, si) => {
      ctx.strokeStyle = ctx.fillStyle = s.color || PALETTE[si % PALETTE.length];
      ctx.lineWidth = 2;
      if (s.bars) { // from 0, 2 … 12 px wide: 60 % of the width per bar
        const bw = Math.max(2, Math.min(12, 0.6 * (W - M.l - M.r) / Math.max(1, s.x.length))), base = py(Math.max(y0, 0));
        for (let i = 0; i < s.x.length; i++)
          if (Number.isFinite(s.y[i])) ctx.fillRect(px(s.x[i]) - bw / 2, Math.min(base, py(s.y[i])), bw, Math.abs(base - py(s.y[i])));
      }
      ctx.setLineDash(s.dash || []);
      ctx.beginPath();
      let pen = false;
      for (let i = 0; s.line !== false && !s.bars && i < s.x.length; i++) {
        if (!Number.isFinite(s.y[i]) || (o.logy && !(s.y[i] > 0))) { pen = false; continue; }
        const x = px(s.x[i]), y = py(s.y[i]);
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.stroke();
      ctx.setLineDash([]);
      if (o.points || s.points)
        for (let i = 0; i < s.x.length; i++)
          if (Number.isFinite(s.y[i])) { ctx.beginPath(); ctx.arc(px(s.x[i]), py(s.y[i]), 3.5, 0, 7); ctx.fill(); }
    });
    if (o.clip) ctx.restore();
    if (ch.cursor !== null) {
      const x = px(ch.cursor);
      ctx.strokeStyle = "#222"; ctx.lineWidth = 1.5; ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(x, M.t); ctx.lineTo(x, H - M.b); ctx.stroke(); ctx.setLineDash([]);
    }
  }
  o.series.forEach((s, si) => legend.append(el("span", {class: "legend-item"},
    el("span", {class: "swatch", style: `background:${s.color || PALETTE[si % PALETTE.length]}`}), s.label || loc(s.name))));
  ch.setCursor = (x) => { ch.cursor = x; draw(); };
  ch.xAt = (clientX) => {
    const b = canvas.getBoundingClientRect(), v = x0 + ((clientX - b.left) * W / b.width - M.l) / (W - M.l - M.r) * (x1 - x0);
    return o.logx ? Math.pow(10, v) : v;
  };
  // where point i of series si is on the screen (for the tests)
  ch.pointAt = (si, i) => {
    const b = canvas.getBoundingClientRect(), k = b.width / W;
    return {x: b.left + px(o.series[si].x[i]) * k, y: b.top + py(o.series[si].y[i]) * k};
  };
  if (o.name) attnPage.charts[o.name] = ch;
  canvas.addEventListener("mousemove", (e) => {
    if (!o.describe) return;
    const b = canvas.getBoundingClientRect(), k = W / b.width;
    const mx = (e.clientX - b.left) * k, my = (e.clientY - b.top) * k;
    let best = null, bd = 400; // within 20 px
    o.series.forEach((s, si) => {
      for (let i = 0; i < s.x.length; i++) {
        if (!Number.isFinite(s.y[i])) continue;
        const d = (px(s.x[i]) - mx) ** 2 + (py(s.y[i]) - my) ** 2;
        if (d < bd) { bd = d; best = [si, i]; }
      }
    });
    if (best) tooltip.show(o.describe(best[0], best[1]), e.clientX, e.clientY);
    else tooltip.hide();
  });
  canvas.addEventListener("mouseleave", () => tooltip.hide());
  draw();
  return ch;
}
