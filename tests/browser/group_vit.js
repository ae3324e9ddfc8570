// tests/browser/group_vit.js — the Vision Transformer's page (`attn train
// --task vit --html`, SPEC §16) on small IDX files written here: the strip
// of test images; picking the third (a click) recomputes it with the
// page's module (`attn vit --input - --pixels …`), and the prediction,
// the true label and the ten probabilities shown are the CLI's `attn vit
// --index 2 --json -` on the saved model (within 1e-6); each head's canvas
// is drawn (the image under a red overlay); a hovered patch's weights are
// the CLI's; the arrow keys pick the next image; the block selector
// redraws the heads of block 1.
"use strict";
const fs = require("fs");
const path = require("path");

// IDX files (plain, not gzip'd) of n random images of side 28 and labels.
function writeIdx(dir, name, n, labelOf, seed) {
  let s = seed >>> 0;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  const img = Buffer.alloc(16 + n * 784);
  img.writeUInt32BE(0x803, 0); img.writeUInt32BE(n, 4); img.writeUInt32BE(28, 8); img.writeUInt32BE(28, 12);
  for (let i = 16; i < img.length; i++) img[i] = rnd();
  const lab = Buffer.alloc(8 + n);
  lab.writeUInt32BE(0x801, 0); lab.writeUInt32BE(n, 4);
  for (let i = 0; i < n; i++) lab[8 + i] = labelOf(i);
  fs.writeFileSync(path.join(dir, name + "-images-idx3-ubyte"), img);
  fs.writeFileSync(path.join(dir, name + "-labels-idx1-ubyte"), lab);
}

module.exports = (h) => ({
  vit: async () => {
    const {check, near, attn, tmp, open, until} = h;
    const dir = tmp("fashion");
    fs.mkdirSync(dir, {recursive: true});
    writeIdx(dir, "train", 40, (i) => i % 10, 5);
    writeIdx(dir, "t10k", 30, (i) => (3 * i) % 10, 7);
    attn(["train", "--task", "vit", "--data", dir, "--epochs", "1", "--batch-size", "8",
          "--save", "vit-model.json", "--html", "vit.html"]);
    const file = tmp("vit.html");
    console.log(`vit page: ${fs.statSync(file).size} bytes`);
    const p = await open(file, "vit");
    const page = p.page;
    const idle = (i) => until(page, (k) => {
      const s = attnPage.state;
      return s.pick === k && !s.computing && (s.result !== null || s.error !== null);
    }, 60000, i);
    check("vit: the first image is picked and computed", await idle(0));
    const strip = await page.evaluate(() => ({
      thumbs: document.querySelectorAll(".vit-strip canvas.vit-thumb").length,
      heads: document.querySelectorAll("canvas.vit-head").length,
      blocks: document.querySelectorAll("#vit-block option").length,
    }));
    check("vit: a strip of 24 test images, 4 heads and the rollout, 2 blocks to choose",
          strip.thumbs === 24 && strip.heads === 5 && strip.blocks === 2, JSON.stringify(strip));

    // the third image, clicked: the module's numbers are the CLI's
    await page.click('.vit-strip canvas[data-index="2"]');
    check("vit: a click on the third image recomputes it", await idle(2));
    const shown = await page.evaluate(() => {
      const pred = document.getElementById("vit-prediction");
      return {
        error: attnPage.state.error, prediction: pred.dataset.prediction, label: pred.dataset.label,
        text: pred.textContent, selected: document.querySelector('.vit-thumb[aria-selected="true"]').dataset.index,
        bars: Array.from(document.querySelectorAll(".vit-bar"), (b) => ({name: b.dataset.class, value: Number(b.dataset.value),
                                                                          text: b.querySelector(".vit-bar-value").textContent})),
        result: attnPage.state.result,
      };
    });
    const want = JSON.parse(attn(["vit", "--input", "vit-model.json", "--data", dir, "--index", "2", "--json", "-"]));
    check("vit: the module ran without an error", shown.error === null, shown.error);
    check("vit: the third image is the one marked in the strip", shown.selected === "2", shown.selected);
    check("vit: the prediction shown is the CLI's (attn vit --index 2)",
          shown.prediction === want.prediction && shown.text.includes(want.prediction), `${shown.text} / ${want.prediction}`);
    check("vit: the true label shown is the CLI's", shown.label === want.label && shown.text.includes(want.label),
          `${shown.label} / ${want.label}`);
    check("vit: the ten probabilities shown are the CLI's within 1e-6",
          shown.bars.length === 10 && shown.bars.every((b, q) => b.name === want.labels[q] && near(b.value, want.probabilities[q], 1e-6) &&
                                                       b.text === want.probabilities[q].toFixed(4)),
          JSON.stringify(shown.bars.map((b) => b.value)) + " / " + JSON.stringify(want.probabilities));
    const L = want.cls_attention.length;
    const sameAtt = shown.result && shown.result.cls_attention.every((blk, l) => blk.every((row, hh) => row.every(
      (w, t) => near(w, want.cls_attention[l][hh][t], 1e-6))));
    check("vit: every block's and head's <cls> attention is the CLI's within 1e-6", sameAtt);

    // each head's canvas drawn: the image under a red overlay
    const drawn = await page.evaluate(() => Array.from(document.querySelectorAll("canvas.vit-head"), (c) => {
      let red = 0, opaque = 0;
      for (let y = 5; y < c.height; y += 14)
        for (let x = 5; x < c.width; x += 14) {
          const [r, g, b, a] = attnPage.pixelAt(c, x, y);
          opaque += a === 255;
          red += r > g + 8 && r > b + 8;
        }
      return {red, opaque};
    }));
    check("vit: the 4 heads' canvases and the rollout's are drawn, red over the image",
          drawn.length === 5 && drawn.every((d) => d.opaque > 100 && d.red > 50), JSON.stringify(drawn));

    // a patch hovered: its weight in each head of the last block, the CLI's
    const box = await page.locator('canvas.vit-head[data-head="0"]').boundingBox();
    await page.mouse.move(box.x + box.width * (1.5 / 4), box.y + box.height * (2.5 / 4)); // patch (2, 1)
    const tip = await page.evaluate(() => document.getElementById("attn-tooltip").textContent);
    const t = 1 + 2 * 4 + 1;
    const heads = want.cls_attention[L - 1].map((row, hh) => `head ${hh + 1}: ${row[t].toFixed(4)}`);
    check("vit: a hovered patch shows its weight in every head of the last block and the rollout, the CLI's",
          tip.includes("patch (2, 1)") && heads.every((s) => tip.includes(s)) &&
          tip.includes(`rollout: ${want.rollout[t].toFixed(4)}`), `${tip} / ${heads.join(" ")}`);
    await page.mouse.move(0, 0);

    // the block selector: block 1's heads
    await page.selectOption("#vit-block", "0");
    const blk = await page.evaluate(() => attnPage.state.block);
    check("vit: the block selector shows block 1", blk === 0, String(blk));

    // the arrow key in the strip: the next image, recomputed
    await page.focus(".vit-strip");
    await page.keyboard.press("ArrowRight");
    check("vit: → in the strip picks and recomputes the fourth image", await idle(3));
    const next = await page.evaluate(() => attnPage.state.result && attnPage.state.result.probabilities);
    const want3 = JSON.parse(attn(["vit", "--input", "vit-model.json", "--data", dir, "--index", "3", "--json", "-"]));
    check("vit: the fourth image's probabilities are the CLI's",
          next && next.every((v, q) => near(v, want3.probabilities[q], 1e-6)), JSON.stringify(next));
    await p.finish();
  },
});
