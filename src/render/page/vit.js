// vit.js — the page of `attn train --task vit --html` (SPEC.md §16):
// d2l.ai 11.8's Vision Transformer, trained. A strip of the first test
// images to pick from (click, or the arrow keys in the strip); for the
// picked one, the image large under each head's <cls> attention over its
// patches (a block's heads, the last by default, and the rollout over the
// blocks), and the ten probabilities as bars with the prediction and the
// true label. Nothing of a pick is precomputed: the page's module runs
// `attn vit --input - --pixels LIST --json -` with the model the page
// holds (pg.model, base64 float32) on its standard input, as the command
// line below the strip says.

Object.assign(PAGE_ZH, {
  "Pick a test image": "选一张测试图像",
  "The first {0} test images of Fashion-MNIST: click one, or move with the arrow keys in the strip. Each pick runs the model in this page (attn's WebAssembly module).": "Fashion-MNIST 的前 {0} 张测试图像：点击一张，或在图像条中用方向键移动。每次选择都在本页中运行模型（attn 的 WebAssembly 模块）。",
  "test image {0}: {1}": "测试图像 {0}：{1}",
  "<cls>'s attention over the patches": "<cls> 对各图块的注意力",
  "Each panel: the image, and over each of its {0} × {1} patches the <cls> query's weight on it (darker red: more; each panel scaled to its largest weight). Hover a patch for its weight in every head.": "每个面板：图像，以及它的 {0} × {1} 个图块上 <cls> 查询对该图块的权重（越红越多；每个面板按其最大权重缩放）。悬停在图块上看它在每个头中的权重。",
  "block": "块",
  "block {0}": "第 {0} 块",
  "rollout": "注意力展开",
  "rollout over the {0} blocks": "{0} 个块上的注意力展开",
  "The probabilities": "概率",
  "prediction: {0} ({1})": "预测：{0}（{1}）",
  "true label: {0}": "真实标签：{0}",
  "right": "正确",
  "wrong": "错误",
  "patch ({0}, {1})": "图块（{0}，{1}）",
  "head {0}: {1}": "头 {0}：{1}",
  "rollout: {0}": "展开：{0}",
  "<cls> itself: {0}": "<cls> 自身：{0}",
  "The training": "训练",
  "{0} training images, {1} test images, epochs trained: {3}; test accuracy {2}.": "{0} 张训练图像，{1} 张测试图像，训练轮数：{3}；测试准确率 {2}。",
  "epoch": "轮",
  "train loss": "训练损失",
  "val loss": "验证损失",
  "val acc": "验证准确率",
  "the picked image (← →)": "选中的图像（← →）",
  "pick the previous or next image": "选上一张或下一张图像",
  "the test images": "测试图像",
  "click": "点击",
});

// The ten labels of Fashion-MNIST (d2l's text_labels) in 中文, for the bars.
const VIT_LABEL_ZH = {
  "t-shirt": "T恤", "trouser": "裤子", "pullover": "套衫", "dress": "连衣裙", "coat": "外套",
  "sandal": "凉鞋", "shirt": "衬衫", "sneaker": "运动鞋", "bag": "包", "ankle boot": "短靴",
};
function vitLabel(s) {
  return attnLang === "zh" && VIT_LABEL_ZH[s] ? `${VIT_LABEL_ZH[s]} (${s})` : s;
}

// The grey image (S, S) of bytes drawn at scale on ctx.
function vitDrawImage(ctx, px, S, scale) {
  const img = ctx.createImageData(S, S);
  for (let i = 0; i < S * S; i++) {
    img.data[4 * i] = img.data[4 * i + 1] = img.data[4 * i + 2] = px[i];
    img.data[4 * i + 3] = 255;
  }
  const one = document.createElement("canvas");
  one.width = one.height = S;
  one.getContext("2d").putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(one, 0, 0, S * scale, S * scale);
}

function vitPage(root, data, pg) {
  const S = pg.img_size, p = pg.patch_size, side = S / p, NH = pg.num_heads, L = pg.num_blks;
  const n = pg.images.count, pixels = base64Bytes(pg.images.pixels);
  const labels = data.labels, cm = colormap(pg.cmap);
  const scale = Math.max(1, Math.floor(168 / S)), big = S * scale;
  const state = {kind: "vit", pick: null, block: L - 1, result: null, computing: false, error: null, runs: 0};
  attnPage.state = state;
  const modelText = JSON.stringify(pg.model);
  const imageOf = (i) => pixels.subarray(i * S * S, (i + 1) * S * S);

  // the strip of test images
  const strip = el("div", {class: "vit-strip", role: "listbox", "aria-label": loc("the test images"), tabindex: "0"});
  const thumbs = [];
  for (let i = 0; i < n; i++) {
    const c = el("canvas", {width: S * 2, height: S * 2, class: "vit-thumb", role: "option",
                            "aria-selected": "false", "data-index": String(i),
                            title: locf("test image {0}: {1}", i, vitLabel(labels[pg.images.labels[i]]))});
    vitDrawImage(c.getContext("2d"), imageOf(i), S, 2);
    c.addEventListener("click", () => pick(i));
    thumbs.push(c);
    strip.append(c);
  }
  strip.addEventListener("keydown", (e) => {
    const at = state.pick ?? 0;
    const to = {ArrowLeft: at - 1, ArrowRight: at + 1, ArrowUp: at - 1, ArrowDown: at + 1, Home: 0, End: n - 1}[e.key];
    if (to === undefined) return;
    e.preventDefault();
    pick(Math.max(0, Math.min(n - 1, to)));
  });
  // the line of the run behind the views; inside the tour (embedded) no
  // #attn-command, which is the page's own command panel's there
  const command = attnPage.embedded ? el("code", {class: "vit-command"})
                                    : el("code", {class: "attn-command", id: "attn-command"});
  const status = el("span", {class: "live-status", role: "status"});
  root.append(section("Pick a test image",
                      locf("The first {0} test images of Fashion-MNIST: click one, or move with the arrow keys in the strip. Each pick runs the model in this page (attn's WebAssembly module).", n),
                      strip, el("p", {class: "live-line"}, el("span", {text: "$ "}), command, status),
                      keysNote([["click", "the picked image (← →)"], ["← →", "pick the previous or next image"]])));

  // the heads over the image
  const title = el("p", {class: "vit-title", id: "vit-title"});
  const blockSel = el("select", {id: "vit-block", "aria-label": loc("block")});
  for (let l = 0; l < L; l++) blockSel.append(el("option", {value: String(l), text: locf("block {0}", l + 1)}));
  blockSel.value = String(L - 1);
  blockSel.addEventListener("change", () => { state.block = Number(blockSel.value); drawHeads(); });
  const panels = el("div", {class: "vit-panels"});
  const canvases = [];
  const panelNames = [];
  for (let h = 0; h <= NH; h++) {
    const c = el("canvas", {width: big, height: big, class: "vit-head", "data-head": h < NH ? String(h) : "rollout"});
    const cap = el("figcaption", {});
    canvases.push(c);
    panelNames.push(cap);
    c.addEventListener("mousemove", (e) => hover(e, c));
    c.addEventListener("mouseleave", () => { tooltip.hide(); drawHeads(); });
    panels.append(el("figure", {class: "vit-panel"}, c, cap));
  }
  root.append(section("<cls>'s attention over the patches",
                      locf("Each panel: the image, and over each of its {0} × {1} patches the <cls> query's weight on it (darker red: more; each panel scaled to its largest weight). Hover a patch for its weight in every head.", side, side),
                      title, el("div", {class: "controls"}, el("label", {for: "vit-block", text: loc("block") + " "}), blockSel),
                      panels));

  // the probabilities
  const bars = el("div", {class: "vit-bars", id: "vit-bars"});
  const predLine = el("p", {class: "vit-prediction", id: "vit-prediction"});
  root.append(section("The probabilities", null, predLine, bars));

  // the training, from --json's members
  const hist = el("table", {class: "data"},
                  el("tr", {}, ...["epoch", "train loss", "val loss", "val acc"].map((h) => el("th", {text: loc(h)}))),
                  ...data.history.map((e) => el("tr", {}, el("td", {text: String(e.epoch)}), el("td", {text: fmt4(e.train_loss)}),
                                                el("td", {text: fmt4(e.val_loss)}), el("td", {text: fmt4(e.val_acc)}))));
  root.append(section("The training",
                      locf("{0} training images, {1} test images, epochs trained: {3}; test accuracy {2}.",
                           data.train_size, data.test_size, fmt4(data.accuracy), data.history.length), hist));

  // the weights of the patches in panel k (a head of the block, or the
  // rollout): (T,) with <cls> first
  function weights(k) {
    const r = state.result;
    if (!r) return null;
    return k < NH ? r.cls_attention[state.block][k] : r.rollout;
  }

  function drawHeads(hl) {
    for (let k = 0; k <= NH; k++) {
      const c = canvases[k], ctx = c.getContext("2d");
      ctx.clearRect(0, 0, big, big);
      if (state.pick === null) continue;
      vitDrawImage(ctx, imageOf(state.pick), S, scale);
      const w = weights(k);
      panelNames[k].textContent = k < NH ? locf("head {0}", k + 1) : locf("rollout over the {0} blocks", L);
      if (!w) continue;
      let top = 0;
      for (let t = 1; t < w.length; t++) top = Math.max(top, w[t]);
      ctx.globalAlpha = 0.6;
      for (let t = 1; t < w.length; t++) {
        const y = Math.floor((t - 1) / side), x = (t - 1) % side;
        ctx.fillStyle = cssColor(cm.lut, cmapIndex(w[t], 0, top));
        ctx.fillRect(x * p * scale, y * p * scale, p * scale, p * scale);
      }
      ctx.globalAlpha = 1;
      ctx.strokeStyle = "rgba(255,255,255,0.35)";
      ctx.lineWidth = 1;
      for (let i = 1; i < side; i++) {
        ctx.beginPath(); ctx.moveTo(i * p * scale + 0.5, 0); ctx.lineTo(i * p * scale + 0.5, big); ctx.stroke();
        ctx.beginPath(); ctx.moveTo(0, i * p * scale + 0.5); ctx.lineTo(big, i * p * scale + 0.5); ctx.stroke();
      }
      if (hl) {
        ctx.strokeStyle = "#1f77b4";
        ctx.lineWidth = 2;
        ctx.strokeRect(hl.x * p * scale + 1, hl.y * p * scale + 1, p * scale - 2, p * scale - 2);
      }
    }
  }

  function hover(e, c) {
    if (!state.result) return;
    const r = c.getBoundingClientRect();
    const x = Math.floor((e.clientX - r.left) / r.width * side), y = Math.floor((e.clientY - r.top) / r.height * side);
    if (x < 0 || y < 0 || x >= side || y >= side) return;
    const t = 1 + y * side + x;
    const lines = [locf("patch ({0}, {1})", y, x) + " · " + locf("block {0}", state.block + 1)];
    for (let h = 0; h < NH; h++) lines.push(locf("head {0}: {1}", h + 1, fmt4(weights(h)[t])));
    lines.push(locf("rollout: {0}", fmt4(state.result.rollout[t])));
    tooltip.show(lines, e.clientX, e.clientY);
    drawHeads({x, y});
  }

  function drawBars() {
    const r = state.result;
    bars.replaceChildren();
    if (!r) return;
    const truth = labels[pg.images.labels[state.pick]];
    predLine.replaceChildren(
      el("strong", {text: locf("prediction: {0} ({1})", vitLabel(r.prediction), fmt4(Math.max(...r.probabilities)))}),
      " · ", el("span", {text: locf("true label: {0}", vitLabel(truth))}), " · ",
      el("span", {class: r.prediction === truth ? "vit-right" : "vit-wrong", text: loc(r.prediction === truth ? "right" : "wrong")}));
    predLine.dataset.prediction = r.prediction;
    predLine.dataset.label = truth;
    r.probabilities.forEach((v, q) => {
      const name = r.labels[q];
      bars.append(el("div", {class: "vit-bar" + (name === r.prediction ? " pred" : "") + (name === truth ? " truth" : ""),
                             "data-class": name, "data-value": fmtG9(v)},
                     el("span", {class: "vit-bar-name", text: vitLabel(name)}),
                     el("span", {class: "vit-bar-track"}, el("span", {class: "vit-bar-fill", style: `width:${(100 * v).toFixed(2)}%`})),
                     el("span", {class: "vit-bar-value", text: fmt4(v)})));
    });
  }

  function argvOf(i) {
    return ["vit", "--input", "-", "--pixels", Array.from(imageOf(i)).join(",")];
  }

  async function pick(i) {
    state.pick = i;
    thumbs.forEach((c, k) => c.setAttribute("aria-selected", String(k === i)));
    thumbs[i].scrollIntoView({block: "nearest", inline: "nearest"});
    title.textContent = locf("test image {0}: {1}", i, vitLabel(labels[pg.images.labels[i]]));
    command.textContent = `attn vit --input MODEL --pixels ${Array.from(imageOf(i).subarray(0, 6)).join(",")},… --json -`;
    state.result = null;
    state.computing = true;
    status.textContent = loc("computing…");
    drawHeads();
    drawBars();
    const serial = ++state.runs;
    try {
      const text = await attnLive.run(argvOf(i), {stdin: modelText});
      if (serial !== state.runs) return; // a later pick is under way
      state.result = JSON.parse(text);
      state.error = null;
      status.textContent = "";
    } catch (err) {
      if (serial !== state.runs) return;
      state.error = err.message;
      status.textContent = err.message;
    }
    state.computing = false;
    drawHeads();
    drawBars();
    document.body.dataset.vitRuns = String(serial);
  }

  pick(0);
}
