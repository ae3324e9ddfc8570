// posenc.js — the page of `attn posenc`: P as a heatmap whose hover shows
// the formula with its numbers, the columns against position with a
// chooser, P·Pᵀ with hover, and the relative-position check as a table.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "position {0}, column {1} ({2}, {3})": "位置 {0}，列 {1}（{2}，{3}）",
  "Col {0}, position {1}": "Col {0}，位置 {1}",
  "columns 0 … {0}, like 6-9 or 0,1,4-5": "列 0 … {0}，如 6-9 或 0,1,4-5",
  "position {0} · position {1} (offset {2})": "位置 {0} · 位置 {1}（偏移 {2}）",
  "{0} positions × {1} columns, layout {2}. Hover a cell for the formula with its numbers; click one to add or remove its column in the plot below.": "{0} 个位置 × {1} 列，布局 {2}。悬停在单元格上看代入数值的公式；点击单元格在下面的图中加上或去掉它的列。",
  "not computed here for {0} positions × {1} columns (--similarity draws it)": "{0} 个位置 × {1} 列时这里不计算（--similarity 会画出）",
  "One rotation R(δ·ω_j), the same for every i, maps {0} to row i+δ; ω_j = 1/{1}^(2j/{2}). The largest difference over every row and pair:": "同一个旋转 R(δ·ω_j)（对每个 i 都相同）把 {0} 映射到第 i+δ 行；ω_j = 1/{1}^(2j/{2})。所有行和列对上的最大差：",
  "position, column, formula, value": "位置、列、公式、值",
  "plot that column too (or no longer)": "也画出这一列（或不再画）",
  "Lower columns oscillate faster; sin and cos columns of one frequency are a quarter period apart.": "越靠前的列振荡越快；同一频率的 sin 列和 cos 列相差四分之一周期。",
  "The dot product of two positions' encodings depends only on their offset: the stripes run parallel to the diagonal.": "两个位置的编码的点积只取决于它们的偏移：条纹与对角线平行。",
  "columns": "列",
  "value": "值",
});

// Column c of P: its function and the exponent's numerator 2j, for the
// chapter's interleaved layout or the sin half | cos half of concat.
function posencColumn(c, D, layout) {
  if (layout === "concat") {
    const h = Math.ceil(D / 2);
    return c < h ? {fn: "sin", twoj: 2 * c} : {fn: "cos", twoj: 2 * (c - h)};
  }
  return {fn: c % 2 ? "cos" : "sin", twoj: c - (c % 2)};
}

// "6-9" or "0,1,4-5" → column numbers below D, or null when malformed.
function parseCols(text, D) {
  const out = [];
  for (const part of text.split(",")) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return null;
    const lo = Number(m[1]), hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo > hi || hi >= D || hi - lo > 64) return null;
    for (let c = lo; c <= hi; c++) if (!out.includes(c)) out.push(c);
  }
  return out.length ? out : null;
}

function posencPage(root, data, pg) {
  const N = data.steps, D = data.dim, base = data.base, layout = data.layout;
  const P = tensor(data.P).data;
  const cm = colormap(pg.cmap), colors = lut32(cm.lut);

  // P: rows = positions, columns = dimensions, on sin and cos's −1 … 1
  // cells as wide as 720 px and as tall as 560 px allow, each 1 … 18 px
  const cellW = Math.max(1, Math.min(18, Math.floor(720 / D))), cellH = Math.max(1, Math.min(18, Math.floor(560 / N)));
  const describeP = (i, c, v) => {
    const {fn, twoj} = posencColumn(c, D, layout);
    const exact = Math[fn](i / Math.pow(base, twoj / D));
    return [locf("position {0}, column {1} ({2}, {3})", i, c, fn, layout),
            `${fn}(${i} / ${base}^(${twoj}/${D})) = ${fmt4(exact)}`,
            `P[${i}, ${c}] = ${fmt4(v)}   float32 ${fmtG9(v)}`];
  };
  const nums = (n) => Array.from({length: n}, (_, i) => String(i));
  const heat = heatPanel({name: "P", rows: N, cols: D, cellW, cellH, values: P, yt: nums(N), xt: nums(D), sparse: true, colors, vmin: -1, vmax: 1,
                          describe: describeP, onPick: (p) => p.sel && toggleCol(p.sel[1])});

  // the columns against position, chosen by the text field or by clicking P
  let cols = pg.cols.slice();
  const chartBox = el("div");
  const colsInput = el("input", {type: "text", value: cols.join(","), size: "16",
                                 "aria-label": loc("columns to plot, e.g. 6-9 or 0,1,4-5")});
  const colsNote = el("span", {class: "note"});
  function drawColumns() {
    const x = Array.from({length: N}, (_, i) => i);
    const series = cols.map((c) => ({name: `Col ${c}`, x, y: Array.from({length: N}, (_, i) => P[i * D + c])}));
    const chart = lineChart({name: "columns", series, xlabel: "Row (position)", ylabel: "value", ylim: [-1.1, 1.1],
                             width: 720, height: 300,
                             describe: (si, i) => {
                               const c = cols[si], {fn, twoj} = posencColumn(c, D, layout);
                               return [locf("Col {0}, position {1}", c, i),
                                       `${fn}(${i} / ${base}^(${twoj}/${D})) = ${fmt4(P[i * D + c])}`];
                             }});
    chartBox.replaceChildren(chart.node);
    colsInput.value = cols.join(",");
    attnPage.state.cols = cols.slice();
  }
  function toggleCol(c) {
    cols = cols.includes(c) ? cols.filter((x) => x !== c) : cols.concat([c]).sort((a, b) => a - b);
    if (!cols.length) cols = [c];
    drawColumns();
  }
  const apply = () => {
    const got = parseCols(colsInput.value, D);
    colsNote.textContent = got ? "" : locf("columns 0 … {0}, like 6-9 or 0,1,4-5", D - 1);
    if (got) { cols = got; drawColumns(); }
  };
  colsInput.addEventListener("change", apply);
  colsInput.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });

  // P·Pᵀ: the similarity of two positions, a function of their offset
  let sim = null;
  if (N * N * D <= 2e8) { // a few hundred ms at most
    const S = new Float32Array(N * N);
    let smin = Infinity, smax = -Infinity;
    for (let i = 0; i < N; i++)
      for (let k = 0; k < N; k++) {
        let s = 0;
        for (let c = 0; c < D; c++) s += P[i * D + c] * P[k * D + c];
        S[i * N + k] = s;
        smin = Math.min(smin, s);
        smax = Math.max(smax, s);
      }
    const sc = cellSize(N, N, 480, 10);
    sim = {S, smin, smax, panel: heatPanel({name: "P·Pᵀ", rows: N, cols: N, cell: sc, values: S, colors,
      yt: nums(N), xt: nums(N), sparse: true,
      vmin: smin, vmax: smax,
      describe: (i, k, v) => [locf("position {0} · position {1} (offset {2})", i, k, k - i),
                              `P[${i}] · P[${k}] = ${fmt4(v)}`]})};
  }

  // the rotation check, as attn prints it
  const table = el("table", {class: "data"},
    el("tr", {}, el("th", {text: loc("offset δ")}), el("th", {text: loc("positions")}), el("th", {text: loc("pairs")}),
       el("th", {text: loc("max |R(δ·ω_j)·(P[i,·]) − P[i+δ,·]|")})));
  for (const r of pg.check_relative)
    table.append(el("tr", {}, el("td", {text: String(r.delta)}), el("td", {text: String(r.positions)}),
                    el("td", {text: String(r.pairs)}), el("td", {text: r.max_difference.toPrecision(3)})));

  const pairText = layout === "concat" ? `(P[i,j], P[i,${Math.ceil(D / 2)}+j])` : "(P[i,2j], P[i,2j+1])";
  root.append(
    section("Positional encoding P", `P[i, 2j] = sin(i / ${base}^(2j/${D})), P[i, 2j+1] = cos(i / ${base}^(2j/${D})); ` +
            locf("{0} positions × {1} columns, layout {2}. Hover a cell for the formula with its numbers; " +
                 "click one to add or remove its column in the plot below.", N, D, layout),
            el("div", {class: "grid-and-bar"}, heat.node, colorbar(cm.lut, -1, 1, "P[i, c]", false)),
            el("div", {class: "axis-note", text: loc("rows: Row (position) · columns: Column (encoding dimension)")}),
            keysNote([["hover", "position, column, formula, value"], ["← ↑ → ↓", "move the highlighted cell"],
                      ["click / Enter", "plot that column too (or no longer)"]])),
    section("Columns against position", "Lower columns oscillate faster; sin and cos columns of one frequency are a " +
            "quarter period apart.", el("div", {class: "controls"}, el("label", {text: loc("columns ")}, colsInput),
                                        el("button", {class: "btn", type: "button", text: loc("plot"), on: {click: apply}}), colsNote),
            chartBox),
    sim ? section("P·Pᵀ", "The dot product of two positions' encodings depends only on their offset: " +
                  "the stripes run parallel to the diagonal.",
                  el("div", {class: "grid-and-bar"}, sim.panel.node, colorbar(cm.lut, sim.smin, sim.smax, "P[i]·P[k]", false)))
        : section("P·Pᵀ", locf("not computed here for {0} positions × {1} columns (--similarity draws it)", N, D)),
    section("Relative position", locf("One rotation R(δ·ω_j), the same for every i, maps {0} to row i+δ; " +
            "ω_j = 1/{1}^(2j/{2}). The largest difference over every row and pair:", pairText, base, D), table));
  drawColumns();
  attnPage.state.kind = "posenc";
}
