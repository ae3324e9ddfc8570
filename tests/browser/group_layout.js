// tests/browser/group_layout.js — issue 40's layout: heatmap tick labels
// never overlap (the induction page's 20 tokens, a 20-token Chinese
// selfattn page), Chinese column labels are stacked upright (not turned),
// and the BERT-size page says why it has no controls.
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
            return {text: t.textContent, title: t.title, x0: b.left, x1: b.right, y0: b.top, y1: b.bottom,
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

    // the induction page: 20 tokens in 4 heads × 2 layers, every other label
    attn(["train", "--task", "induction", "--steps", "30", "--html", "induction.html"]);
    let p = await h.open(tmp("induction.html"), "layout-induction");
    let all = await boxes(p.page);
    noOverlap("induction", all);
    const y0 = all.find((g) => g.axis === "hm-yt" && g.ticks.length);
    check("induction: long sequences thin their labels (10 of 20 rows)", y0 && y0.ticks.length === 10,
          y0 && y0.ticks.length);
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
