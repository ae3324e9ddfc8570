// tests/browser/group_layout.js — issue 40's layout: heatmap tick labels
// never overlap (the induction page's 20 tokens, a 20-token Chinese
// selfattn page, a 100-token page), panels are sized to their token count
// (every one of 20 labels shown; 100 thinned to every n-th, each on its
// cell), a grid's panels balanced over its lines, Chinese column labels
// upright (stacked, not turned), and the BERT-size page says why it has
// no controls.
"use strict";

module.exports = (h) => ({
  layout: async () => {
    const {check, attn, tmp, open} = h;

    // every shown tick label's box, by panel and axis, and how each is drawn
    const boxes = (page) => page.evaluate(() => {
      const out = [];
      document.querySelectorAll("figure.hm").forEach((fig, k) => {
        for (const axis of ["hm-yt", "hm-xt"]) {
          const ticks = [...fig.querySelectorAll(`.${axis} .tick`)];
          out.push({panel: k, axis, ticks: ticks.map((t) => {
            const b = t.getBoundingClientRect(), cs = getComputedStyle(t);
            return {text: t.textContent, title: t.title, i: Number(t.dataset.i), x0: b.left, x1: b.right, y0: b.top, y1: b.bottom,
                    writing: cs.writingMode, transform: cs.transform, stacked: t.classList.contains("stacked")};
          })});
        }
      });
      return out;
    });
    const overlaps = (ticks) => {
      for (let i = 0; i < ticks.length; i++)
        for (let j = i + 1; j < ticks.length; j++) {
          const a = ticks[i], b = ticks[j];
          // half a pixel of rounding allowed
          if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5)
            return `${a.text} and ${b.text}`;
        }
      return null;
    };
    const noOverlap = (name, all) => {
      let bad = null, shown = 0;
      for (const g of all) {
        shown += g.ticks.length;
        const o = overlaps(g.ticks);
        if (o && !bad) bad = `panel ${g.panel} ${g.axis}: ${o}`;
      }
      check(`${name}: ${shown} tick labels, no two overlap`, shown > 0 && !bad, bad);
    };

    // each panel's canvas: its size, where it is, and its cells
    const panels = (page) => page.evaluate(() => [...document.querySelectorAll("figure.hm canvas")].map((c) => {
      const b = c.getBoundingClientRect();
      return {name: c.dataset.panel, w: c.clientWidth, h: c.clientHeight, x: b.left + c.clientLeft,
              y: b.top + c.clientTop, rows: Number(c.dataset.rows), cols: Number(c.dataset.cols)};
    }));
    // every shown label sits on its own cell: label i (data-i), the i-th
    // token, its middle inside row i (a row label) or column i (a column's)
    const onCells = (all, cv, tokens) => all.every((g) => {
      const c = cv[g.panel];
      return g.ticks.every((t) => {
        const i = t.i;
        if (tokens[i] !== t.title) return false;
        if (g.axis === "hm-yt") {
          const m = (t.y0 + t.y1) / 2, size = c.h / c.rows;
          return m > c.y + i * size && m < c.y + (i + 1) * size;
        }
        const m = (t.x0 + t.x1) / 2, size = c.w / c.cols;
        return m > c.x + i * size && m < c.x + (i + 1) * size;
      });
    });

    // the induction page: 20 tokens in 4 heads × 2 layers, every label
    // shown (cells of at least 16 px), the 4 heads of a layer on 2 lines of 2
    attn(["train", "--task", "induction", "--steps", "30", "--html", "induction.html"]);
    let p = await h.open(tmp("induction.html"), "layout-induction");
    let all = await boxes(p.page);
    noOverlap("induction", all);
    check("induction: all 20 labels on each axis of each of the 8 panels",
          all.length === 16 && all.every((g) => g.ticks.length === 20), all.map((g) => g.ticks.length).join(" "));
    const ind = await panels(p.page);
    check("induction: cells of at least 16 px", ind.length === 8 && ind.every((c) => c.w / c.cols >= 16 && c.h / c.rows >= 16),
          JSON.stringify(ind[0]));
    const lines = (cs) => { const n = new Map(); for (const c of cs) n.set(Math.round(c.y), (n.get(Math.round(c.y)) || 0) + 1); return [...n.values()]; };
    const l1 = lines(ind.slice(0, 4));
    check("induction: a layer's 4 heads balanced, 2 lines of 2", l1.join(" ") === "2 2", l1.join(" "));
    const indTokens = all[0].ticks.map((t) => t.title); // every label shown: the 20 tokens
    check("induction: every label on its cell", onCells(all, ind, indTokens));
    await p.finish();

    // 100 tokens: smaller cells, the labels thinned to every n-th, none overlapping
    const long = Array.from({length: 100}, (_, i) => `w${i}`);
    attn(["selfattn", "--tokens", long.join(" "), "--hiddens", "16", "--heads", "2", "--html", "long.html"]);
    p = await h.open(tmp("long.html"), "layout-long");
    all = await boxes(p.page);
    noOverlap("long", all);
    const lg = await panels(p.page), lcell = lg[0].w / 100;
    const step = Math.ceil(16 / lcell);
    check("long: labels thinned to every n-th, on both axes of both panels",
          all.length === 4 && step > 1 && all.every((g) => g.ticks.length === Math.ceil(100 / step) &&
            g.ticks.every((t, j) => t.title === `w${j * step}`)), `step ${step}: ` + all.map((g) => g.ticks.length).join(" "));
    check("long: every label on its cell", onCells(all, lg, long));
    const tip = await h.hover(p.page, "example 0 head 2", 37, 62);
    check("long: hover names the cell under the pointer", tip.includes("query 37 “w37” → key 62 “w62”"), tip);

    // a panel grows with its token count: 7, 20, 100 tokens
    attn(["selfattn", "--tokens", "我 爱 北 京 天 安 门", "--html", "seven.html"]);
    const p7 = await h.open(tmp("seven.html"), "layout-seven");
    const sv = await panels(p7.page);
    await p7.finish();
    check("a panel's size grows with its tokens: 7 < 20 < 100",
          sv[0].w < ind[0].w && ind[0].w < lg[0].w && sv[0].h < ind[0].h && ind[0].h < lg[0].h,
          `${sv[0].w} ${ind[0].w} ${lg[0].w}`);
    await p.finish();

    // a Chinese selfattn page: 20 tokens, the column labels stacked upright
    const words = "苹果 很 好吃 不 是 吗 我 爱 北京 天安门 的 苹果 发布 了 新的 产品 和 一个 手机 吗";
    attn(["selfattn", "--tokens", words, "--hiddens", "16", "--heads", "2", "--html", "cjk.html"]);
    p = await h.open(tmp("cjk.html"), "layout-cjk");
    all = await boxes(p.page);
    noOverlap("cjk", all);
    const xs = all.filter((g) => g.axis === "hm-xt").flatMap((g) => g.ticks);
    check("cjk: every column label stacked, written top to bottom, not turned",
          xs.length >= 20 && xs.every((t) => t.stacked && t.text === [...t.title].join("\n") &&
                                             !/matrix\(0, -1/.test(t.transform)),
          JSON.stringify(xs.slice(0, 2)));
    // stacked: 天安门's box is taller than wide (three characters one under another)
    const tam = xs.find((t) => t.title === "天安门");
    check("cjk: 天安门 stands upright, taller than wide", tam && tam.y1 - tam.y0 > 2 * (tam.x1 - tam.x0),
          tam && JSON.stringify(tam));
    // one label a column, each centred on it: in the order of the tokens
    const first = xs.slice(0, 20);
    check("cjk: the labels left to right in the tokens' order",
          first.map((t) => t.title).join(" ") === words && first.every((t, i) => i === 0 || t.x0 > first[i - 1].x0));
    const cj = await panels(p.page), ccell = cj[0].w / 20;
    check("cjk: every label on its cell", onCells(all, cj, words.split(" ")));
    const two = xs.filter((t) => [...t.title].length <= 2);
    check("cjk: each label of 1 or 2 characters upright within its column",
          two.length >= 30 && two.every((t) => t.x1 - t.x0 <= ccell && t.y1 - t.y0 >= 12 * [...t.title].length),
          `${ccell} px: ` + JSON.stringify(two.find((t) => t.x1 - t.x0 > ccell)));
    await p.finish();

    // a short Chinese sequence whose labels fit their columns: horizontal
    attn(["selfattn", "--tokens", "我爱北京天安门", "--hiddens", "8", "--heads", "2", "--html", "short.html"]);
    p = await h.open(tmp("short.html"), "layout-short");
    all = await boxes(p.page);
    noOverlap("short", all);
    const sx = all.filter((g) => g.axis === "hm-xt").flatMap((g) => g.ticks);
    check("short: 7 one-character labels a panel, horizontal (they fit)",
          sx.length === 14 && sx.every((t) => !t.stacked && t.text === t.title && t.transform === "none"),
          JSON.stringify(sx.slice(0, 1)));
    await p.finish();

    // the BERT-size page: no controls, and a note that says why
    attn(["multihead", "--queries", "512", "--kv", "512", "--hiddens", "768", "--heads", "12", "--batch", "1",
          "--fill", "random", "--valid-lens", "none", "--html", "bert.html"]);
    p = await h.open(tmp("bert.html"), "layout-bert");
    const bert = await p.page.evaluate(() => ({
      note: (document.querySelector(".bert-note") || {}).textContent || "",
      controls: document.querySelectorAll("[data-attn-option]").length,
    }));
    check("bert: no controls", bert.controls === 0, bert.controls);
    check("bert: the note says why and what it offers",
          bert.note.startsWith("No controls on this page: its 3,145,728 weights") &&
          bert.note.includes("rerun the command above") && bert.note.includes("every weight on hover"), bert.note);
    await p.finish();
  },
});
