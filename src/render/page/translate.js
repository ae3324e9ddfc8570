// translate.js — the page of a translation (`attn train --task translate
// --html`, `attn translate --html`): one sentence, and the encoder–
// decoder's attention over it as a grid of blocks × heads. The selector
// shows the cross-attention (target words down, source words across), the
// encoder's self-attention, the decoder's causal self-attention, or all
// three. A training run adds a step slider over every logged step that
// moves the views, the probe's translation at that step and the curves'
// cursor together, and ends with the held-out translations.
//
// pg = {model: {layers, heads, …}, source, target, decoder_input, rows,
//       sentence: {source, reference, translation, bleu}, steps (null: one
//       state), cross (S, L, NH, Tq, Ts), encoder (S, L, NH, Ts, Ts) or
//       null, decoder (S, L, NH, Tq, Tq) or null; for training also
//       step_translations, align, stride, translations}
// model.arch "bahdanau": d2l's Seq2Seq with Bahdanau attention, its one
// attention (1 block × 1 head: the query s(t′−1), the decoder's previous
// state; keys = values the encoder's states) and no self-attention.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "scaled dot-product attention's (q·k/√d)": "缩放点积注意力的（q·k/√d）",
  "additive attention's": "加性注意力的",
  "A row is a target word being written at step t′; its weights over the source words are the {0}, its query the decoder's state after the word before, s(t′−1). The context they weigh goes into the {1} with the word. One attention: no blocks, no heads; the alignment score reads it.": "一行是时间步 t′ 正在写出的目标词；它在源词上的权重是{0}，查询是写完前一个词后解码器的状态 s(t′−1)。它们加权得到的上下文与该词一起送入 {1}。只有一个注意力：没有块，没有头；对齐分数读的就是它。",
  "A row is a target word being written; its weights over the source words say where the decoder looks while it writes that word. The last panel of a block is its heads averaged: in the last block, what the alignment score reads.": "一行是正在写出的目标词；它在源词上的权重说明解码器写这个词时看向哪里。每块的最后一个面板是各头的平均：在最后一块，对齐分数读的就是它。",
  "Each source word over the whole source sentence (not causal; the padding is left out).": "每个源词在整个源句上的注意力（非因果；不含填充）。",
  "A row is a target word being written; the columns are the decoder's input so far: <bos> and the words written before it. Keys after the query are masked (striped).": "一行是正在写出的目标词；列是解码器到此为止的输入：<bos> 和之前写出的词。查询之后的键被掩蔽（条纹）。",
  "s(t′−1) at step {0}, writing {1}": "时间步 {0} 的 s(t′−1)，正在写 {1}",
  "H_{0}, the encoder's state at {1}": "H_{0}，编码器在 {1} 处的状态",
  "the context at step {0}, Σⱼ wⱼ Hⱼ": "时间步 {0} 的上下文，Σⱼ wⱼ Hⱼ",
  "head {0}'s output at {1}, Σⱼ wⱼ vⱼ": "头 {0} 在 {1} 处的输出，Σⱼ wⱼ vⱼ",
  "the source's <pad>": "源句的 <pad>",
  "cross block {0}": "交叉注意力 第 {0} 块",
  "encoder block {0}": "编码器 第 {0} 块",
  "decoder block {0}": "解码器 第 {0} 块",
  "block {0}": "第 {0} 块",
  " (the last)": "（最后一块）",
  "Bahdanau's attention, its query the decoder's previous state s(t′−1)": "Bahdanau 注意力，查询是解码器的上一个状态 s(t′−1)",
  "all three": "全部三个",
  "{0} (key {1})": "{0}（按键 {1}）",
  "source": "源句",
  "translation": "译文",
  "translation (greedy)": "译文（贪心）",
  " (exact)": "（完全正确）",
  "(nothing: <eos> first)": "（空：先出现了 <eos>）",
  "held-out BLEU {0}": "留出集 BLEU {0}",
  "exact {0}": "完全正确 {0}",
  "alignment {0}": "对齐 {0}",
  "the first {0} of {1}": "{1} 个中的前 {0} 个",
  "all {0}": "全部 {0} 个",
  "Greedy decoding after the last step (d2l's predict_seq2seq), {0} held-out sentences; {1} of all {2} are exact. BLEU as d2l's bleu(…, k=2).": "最后一步之后的贪心解码（d2l 的 predict_seq2seq），留出句：{0}；全部 {2} 个中 {1} 完全正确。BLEU 同 d2l 的 bleu(…, k=2)。",
  " only the {0} not translated exactly": " 只看未完全译对的 {0} 个",
  "Seq2Seq with Bahdanau attention, {0} {1} layer a side, d {2}; ": "带 Bahdanau 注意力的 Seq2Seq，每侧 {0} 层 {1}，d {2}；",
  "Seq2Seq with Bahdanau attention, {0} {1} layers a side, d {2}; ": "带 Bahdanau 注意力的 Seq2Seq，每侧 {0} 层 {1}，d {2}；",
  "one dot-product attention, its query the decoder's previous state s(t′−1).": "一个点积注意力，查询是解码器的上一个状态 s(t′−1)。",
  "one attention, its query the decoder's previous state s(t′−1).": "一个注意力，查询是解码器的上一个状态 s(t′−1)。",
  "Transformer encoder–decoder, {0} block a side, d {1}, {2} heads.": "Transformer 编码器-解码器，每侧 {0} 块，d {1}，{2} 个头。",
  "Transformer encoder–decoder, {0} blocks a side, d {1}, {2} heads.": "Transformer 编码器-解码器，每侧 {0} 块，d {1}，{2} 个头。",
  " After {0} steps: loss {1}": "{0} 步之后：损失 {1}",
  ", held-out BLEU {0}": "，留出集 BLEU {0}",
  ", exact {0}": "，完全正确 {0}",
  "show {0}": "显示{0}",
  "a cell's words and weight": "单元格的两个词和权重",
  " frame the source word that each target word translates": " 给每个目标词所译自的源词加框",
  "greedy, at step {0}": "贪心，第 {0} 步",
  ": the reference, word for word": "：与参考译文逐词相同",
  "Training: {0}, {1} steps": "训练：{0}，{1} 步",
  "The probe, {0} sentence {1}: its attention is teacher-forced on the reference (the rows are the reference's words); its translation is greedy.": "探针：{0} 的第 {1} 句：它的注意力以参考译文强制教学（行是参考译文的词）；它的译文是贪心解码的。",
  "One attention, one scale 0 … 1": "一个注意力，同一色标 0 … 1",
  "Blocks down, heads across, one scale 0 … 1": "块纵向排列，头横向排列，同一色标 0 … 1",
  " for every step": "（每一步相同）",
  ". Hover a cell for the two words and the weight": "。悬停在单元格上看两个词和权重",
  "; beside the panels, the numbers behind it (q, k, the score, the mask, the softmax)": "；面板旁是它背后的数（q、k、评分、掩蔽、softmax）",
  "; click a panel to enlarge it.": "；点击面板放大。",
  " The page keeps one logged step in {0} (and the last); the curves have them all.": " 页面每 {0} 个记录的步保留一个（以及最后一步）；曲线包含全部。",
  "The translation": "翻译",
  "Attention of the probe at the slider's step": "滑块所在步的探针注意力",
  "Attention": "注意力",
  "The attention in BertViz's manner: queries (s(t′−1) at each target word) on the left, keys on the right, a line's opacity is the weight; hover a word for its lines.": "BertViz 式的注意力：左边是查询（每个目标词处的 s(t′−1)），右边是键，线的不透明度就是权重；悬停在词上看它的线。",
  "The selected attention (with all three: the cross-attention) in BertViz's manner: queries on the left, keys on the right, a line's opacity is the weight, one colour per head; click a colour to hide its head, hover a word for its lines.": "BertViz 式的所选注意力（选全部三个时为交叉注意力）：左边是查询，右边是键，线的不透明度就是权重，每个头一种颜色；点击颜色隐藏该头，悬停在词上看它的线。",
  "attention (query s(t′−1))": "注意力（查询 s(t′−1)）",
  "cross-attention": "交叉注意力",
  "encoder self-attention": "编码器自注意力",
  "decoder self-attention": "解码器自注意力",
  "decoder input": "解码器输入",
  "source words (keys = values: the encoder's states H)": "源词（键 = 值：编码器的状态 H）",
  "target words (queries: s(t′−1))": "目标词（查询：s(t′−1)）",
  "source words (keys: the encoder's outputs)": "源词（键：编码器的输出）",
  "target words (queries: the decoder)": "目标词（查询：解码器）",
  "source words (keys)": "源词（键）",
  "source words (queries)": "源词（查询）",
  "the decoder's input (keys: <bos>, then the words before)": "解码器的输入（键：<bos>，然后是之前的词）",
  "target words (queries)": "目标词（查询）",
  "held-out exact": "留出集完全正确",
  "alignment (the attention)": "对齐（该注意力）",
  "alignment (last block)": "对齐（最后一块）",
  "scores": "评分",
  "train": "训练集",
  "held-out": "留出集",
  " Every head scores additively, w_v·tanh(W_q q + W_k k).": "每个头都用加性评分 w_v·tanh(W_q q + W_k k)。",
});

const BAHDANAU_NAME = "Bahdanau's attention, its query the decoder's previous state s(t′−1)";

// The Bahdanau model's one attention, as translateKinds' cross entry.
function bahdanauKind(pg) {
  const m = pg.model || {}, rnn = m.rnn === "lstm" ? "LSTM" : "GRU";
  const score = loc(m.score === "dot" ? "scaled dot-product attention's (q·k/√d)" : "additive attention's");
  return {key: "cross", label: "attention (query s(t′−1))", tensor: pg.cross, q: pg.target, k: pg.source,
          qname: "target word", kname: "source word", causal: false,
          xlabel: "source words (keys = values: the encoder's states H)", ylabel: "target words (queries: s(t′−1))",
          title: loc("Bahdanau attention: the query the decoder's previous state s(t′−1), keys and values the encoder's states"),
          note: locf("A row is a target word being written at step t′; its weights over the source words are the {0}, " +
                     "its query the decoder's state after the word before, s(t′−1). The context they weigh " +
                     "goes into the {1} with the word. One attention: no blocks, no heads; the alignment score reads it.", score, rnn)};
}

// The attentions a page can show: their names, tokens and words.
function translateKinds(pg) {
  if (pg.model.arch === "bahdanau") return [bahdanauKind(pg)];
  return [
    {key: "cross", label: "cross-attention", tensor: pg.cross, q: pg.target, k: pg.source,
     qname: "target word", kname: "source word", causal: false,
     xlabel: "source words (keys: the encoder's outputs)", ylabel: "target words (queries: the decoder)",
     title: loc("Cross-attention: Q from the decoder, K = V from the encoder"),
     note: loc("A row is a target word being written; its weights over the source words say where the " +
               "decoder looks while it writes that word. The last panel of a block is its heads averaged: in the " +
               "last block, what the alignment score reads.")},
    {key: "encoder", label: "encoder self-attention", tensor: pg.encoder, q: pg.source, k: pg.source,
     qname: "source word", kname: "source word", causal: false,
     xlabel: "source words (keys)", ylabel: "source words (queries)",
     title: loc("The encoder's self-attention"),
     note: loc("Each source word over the whole source sentence (not causal; the padding is left out).")},
    {key: "decoder", label: "decoder self-attention", tensor: pg.decoder, q: pg.target, k: pg.decoder_input,
     qname: "target word", kname: "decoder input", causal: true,
     xlabel: "the decoder's input (keys: <bos>, then the words before)", ylabel: "target words (queries)",
     title: loc("The decoder's self-attention (causal)"),
     note: loc("A row is a target word being written; the columns are the decoder's input so far: <bos> and " +
               "the words written before it. Keys after the query are masked (striped).")},
  ].filter((v) => v.tensor);
}

// The numbers behind a weight (SPEC §14) of an `attn translate` page's
// Transformer: `translate --input - … --explain --json -` run by the
// page's module on the model the page holds (pg.model_file, as live.js
// gives it), its "explain" member (cmd/translate/translate_explain.h)
// read at (block, head, query, key) of the kind's attention; the weight
// is --json's own. A Bahdanau model's one attention: at step t′ the query
// s(t′−1), keys and values the encoder's states H_j, the output the
// context. null where there is none: a training run's page, a page
// without the model.
function translatePath(kind, pg) {
  const argv = pg.steps || !pg.model_file ? null : liveArgv(pg);
  if (!argv || argv[0] !== "translate") return null;
  const run = liveStdin(argv, () => JSON.stringify(pg.model_file));
  const weights = {cross: "cross_attention", encoder: "encoder_attention", decoder: "decoder_attention"}[kind.key];
  const word = (tokens, i) => `“${tokens[i]}”`;
  const bahdanau = pg.model.arch === "bahdanau";
  const names = (h, q, k) => bahdanau
    ? {qName: locf("s(t′−1) at step {0}, writing {1}", q, word(kind.q, q)), kName: locf("H_{0}, the encoder's state at {1}", k, word(kind.k, k)),
       vName: `H_${k}`, outputName: locf("the context at step {0}, Σⱼ wⱼ Hⱼ", q)}
    : {qName: `Q_${h + 1}[${q}], ${loc(kind.qname)} ${word(kind.q, q)}`, kName: `K_${h + 1}[${k}], ${loc(kind.kname)} ${word(kind.k, k)}`,
       vName: `V_${h + 1}[${k}]`, outputName: locf("head {0}'s output at {1}, Σⱼ wⱼ vⱼ", h + 1, word(kind.q, q))};
  return {
    argv: run.argv, stdin: run.stdin,
    cell: (spec, r, h, q, k) => `${kind.key}:${r},${h},${q},${k}`,
    at: (doc, spec, r, h, q, k) => {
      const e = doc.explain, a = e[kind.key];
      const masked = a.masked[r][h][q][k] === 1;
      const c = {p: e.p, first: e.first, ...names(h, q, k), q: a.q[r][h][q], k: a.k[r][h][k], v: a.v[r][h][k],
                 score: a.scores[r][h][q][k], masked,
                 why: masked ? loc(kind.causal && k > q ? "causal: a key after the query" : "the source's <pad>") : null,
                 maskedScore: a.masked_scores[r][h][q][k], rowMax: a.row_max[r][h][q], rowSumExp: a.row_sum_exp[r][h][q],
                 weight: doc[weights][r][h][q][k], output: a.head_output[r][h][q]};
      if (e.score === "dot") c.dot = {scale: e.scale, scaled: a.scaled[r][h][q][k]};
      else c.additive = {hiddens: e.hiddens, first: e.first_hiddens, qa: a.qa[r][h][q], ka: a.ka[r][h][k],
                         tanh: a.tanh[r][h][q][k], w_v: a.w_v ? a.w_v[r] : e.w_v};  // a Transformer's: block r's
      return c;
    },
  };
}

// One attention's grid and head view, drawn at step i by show(i).
function translateView(kind, pg, S, cm, framed) {
  const att = tensor(kind.tensor).data, per = att.length / S, L = pg.model.layers;
  const bahdanau = pg.model.arch === "bahdanau";
  const rows = bahdanau ? [{name: "bahdanau", label: loc("bahdanau"), query_tokens: kind.q, key_tokens: kind.k, valid_lens: null, title: loc(BAHDANAU_NAME)}]
    : Array.from({length: L}, (_, l) => ({
      name: `${kind.key} block ${l + 1}`, query_tokens: kind.q, key_tokens: kind.k, valid_lens: null,
      label: locf(`${kind.key} block {0}`, l + 1),
      title: locf("block {0}", l + 1) + (L > 1 && l === L - 1 ? loc(" (the last)") : ""),
    }));
  const spec = {rows, heads: pg.model.heads, Nq: kind.q.length, Nk: kind.k.length, weights: att.subarray(0, per),
                causal: kind.causal, cmap: cm, vmin: 0, vmax: 1, xlabel: kind.xlabel, ylabel: kind.ylabel,
                qname: kind.qname, kname: kind.kname, average: !bahdanau};
  if (bahdanau) spec.headName = () => "attention";
  spec.path = translatePath(kind, pg) || undefined;
  if (kind.key === "cross" && framed) {
    spec.framed = framed;
    spec.framedNote = (q) => locf("framed: “{0}” translates this source word", kind.q[q]);
  }
  const grid = attentionGrid(spec);
  const hv = headView(spec, () => grid.weights);
  grid.headView = hv;
  const node = el("div", {class: "xview", "data-view": kind.key},
                  el("h3", {text: kind.title}), el("p", {class: "note", text: kind.note}), grid.node);
  const hvNode = el("div", {class: "xview", "data-headview": kind.key}, hv.node);
  return {kind, spec, grid, hv, node, hvNode, show: (i) => grid.update(att.subarray(i * per, (i + 1) * per))};
}

// The selector: which attention is shown (or all three), with its keys.
function translateSelector(views, select) {
  const box = el("div", {class: "seg", role: "group", "aria-label": loc("attention shown")});
  const choices = views.map((v, i) => [v.kind.key, loc(v.kind.label), String(i + 1)]);
  if (views.length > 1) choices.push(["all", loc("all three"), String(views.length + 1)]);
  const buttons = choices.map(([key, label, k]) =>
    el("button", {type: "button", class: "seg-btn", "data-show": key, "aria-pressed": "false",
                  title: locf("{0} (key {1})", label, k), text: label, on: {click: () => select(key)}}));
  box.append(el("span", {class: "note", text: loc("show: ")}), ...buttons);
  box.mark = (key) => buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.show === key)));
  box.keys = Object.fromEntries(choices.map(([key, , k]) => [k, key]));
  return box;
}

// "source", "reference", "translation" lines of the sentence; set(text,
// what) changes the translation's line (the slider's step) and the note
// beside it.
function sentenceLines(pg) {
  const st = pg.sentence, dl = el("dl", {class: "sentence"});
  const add = (term, ...content) => dl.append(el("dt", {text: term}), el("dd", {}, ...content));
  const words = (text) => el("span", {class: "words", text: text === null ? "—" : text});
  const training = pg.rows === "reference";
  const tr = words(st.translation), note = el("span", {class: "note"});
  add(loc("source"), words(st.source));
  if (training) add(loc("reference"), words(st.reference));
  add(loc(training ? "translation" : "translation (greedy)"), tr, note);
  if (!training && st.reference !== null) {
    add(loc("reference"), words(st.reference));
    if (st.bleu !== null) add("BLEU", st.bleu.toFixed(3) + (st.translation === st.reference ? loc(" (exact)") : ""));
  }
  dl.set = (text, what) => {
    tr.textContent = text === "" ? loc("(nothing: <eos> first)") : text;
    tr.classList.toggle("exact", text === st.reference);
    note.textContent = what ? "  " + what : "";
  };
  return dl;
}

// The curves of a training run, each with a cursor at the step.
function translateCharts(doc) {
  const x = doc.history.map((h) => h.step);
  const col = (key) => doc.history.map((h) => (h[key] === null ? NaN : h[key]));
  const loss = lineChart({name: "loss", xlabel: "step", ylabel: "loss", width: 560, height: 240,
    series: [{name: "training loss (the batch's)", x, y: col("loss"), color: PALETTE[0]}],
    describe: (si, i) => [locf("step {0}", x[i]), locf("loss {0}", doc.history[i].loss.toFixed(4))]});
  const series = [{name: "held-out BLEU", x, y: col("heldout_bleu"), color: PALETTE[2]},
                  {name: "held-out exact", x, y: col("heldout_exact"), color: PALETTE[4], dash: [6, 4]},
                  {name: doc.arch === "bahdanau" ? "alignment (the attention)" : "alignment (last block)", x,
                   y: col("alignment"), color: PALETTE[1]}]
    .filter((s) => s.y.some(Number.isFinite));
  const scores = series.length ? lineChart({name: "scores", xlabel: "step", ylabel: "score", width: 560, height: 240,
    ylim: [0, 1], series, describe: (si, i) => [loc(series[si].name), locf("step {0}: {1}", x[i], series[si].y[i].toFixed(3))]}) : null;
  return {loss, scores, setCursor: (s) => { loss.setCursor(s); if (scores) scores.setCursor(s); }};
}

// What the step line says about step s: its history entry's numbers.
function translateStepText(doc, steps, i) {
  const s = steps[i], h = doc.history.find((e) => e.step === s);
  const parts = [locf("step {0} of {1}", s, steps[steps.length - 1])];
  if (!h) parts.push(loc("before training"));
  else {
    parts.push(locf("loss {0}", h.loss.toFixed(4)));
    if (h.heldout_bleu !== null) parts.push(locf("held-out BLEU {0}", h.heldout_bleu.toFixed(3)));
    if (h.heldout_exact !== null) parts.push(locf("exact {0}", pct(h.heldout_exact)));
    if (h.alignment !== null) parts.push(locf("alignment {0}", h.alignment.toFixed(3)));
  }
  return parts.join(" · ");
}

// The held-out translations after the last step, with a filter for the
// ones that are not exact.
function translationsTable(tr) {
  const table = el("table", {class: "data translations", "data-table": "translations"},
    el("tr", {}, el("th", {text: "#"}), ...["source", "translation", "reference"].map((t) => el("th", {class: "words", text: loc(t)})),
       el("th", {text: loc("BLEU")})));
  tr.shown.forEach((row, i) => {
    const exact = row.translation === row.reference;
    table.append(el("tr", {class: exact ? "exact" : "miss", "data-row": String(i)},
      el("td", {text: String(i + 1)}), el("td", {class: "words", text: row.source}),
      el("td", {class: "words", text: row.translation}), el("td", {class: "words", text: row.reference}),
      el("td", {text: row.bleu.toFixed(3)})));
  });
  const misses = tr.shown.filter((r) => r.translation !== r.reference).length;
  const only = el("input", {type: "checkbox", on: {change: () => table.classList.toggle("only-miss", only.checked)}});
  const shown = tr.shown.length < tr.count ? locf("the first {0} of {1}", tr.shown.length, tr.count) : locf("all {0}", tr.count);
  return section("Held-out translations", locf("Greedy decoding after the last step (d2l's predict_seq2seq), {0} " +
                 "held-out sentences; {1} of all {2} are exact. BLEU as d2l's bleu(…, k=2).", shown, pct(tr.exact), tr.count),
                 el("label", {class: "note"}, only, locf(" only the {0} not translated exactly", misses)),
                 el("div", {class: "table-box"}, table));
}

// The line under the heading: the model and, after training, its figures.
function translateSummary(data, pg, training) {
  const m = pg.model, d = data.final;
  const model = m.arch === "bahdanau"
    ? locf(m.gru_layers === 1 ? "Seq2Seq with Bahdanau attention, {0} {1} layer a side, d {2}; "
                              : "Seq2Seq with Bahdanau attention, {0} {1} layers a side, d {2}; ",
           m.gru_layers, m.rnn === "lstm" ? "LSTM" : "GRU", m.hiddens) +
      loc(m.score === "dot" ? "one dot-product attention, its query the decoder's previous state s(t′−1)."
                            : "one attention, its query the decoder's previous state s(t′−1).")
    : locf(m.layers === 1 ? "Transformer encoder–decoder, {0} block a side, d {1}, {2} heads."
                          : "Transformer encoder–decoder, {0} blocks a side, d {1}, {2} heads.", m.layers, m.hiddens, m.heads) +
      (m.score === "additive" ? loc(" Every head scores additively, w_v·tanh(W_q q + W_k k).") : "");
  if (!training) return model;
  return model + locf(" After {0} steps: loss {1}", data.steps, d.loss.toFixed(4)) +
         (d.bleu !== null ? locf(", held-out BLEU {0}", d.bleu.toFixed(3)) : "") + (d.exact !== null ? locf(", exact {0}", pct(d.exact)) : "") +
         (d.alignment !== null ? locf(", alignment {0}", d.alignment.toFixed(3)) : "") + loc(".");
}

// The keys of the page, listed on it.
function translateKeys(slider, selector, views) {
  const label = (key) => loc(key === "all" ? "all three" : views.find((v) => v.kind.key === key).kind.label);
  return keysNote([...(slider ? [["← →", "the previous or next logged step"], ["Home / End", "the first or last step"],
                                 ["▶ play", "run through the steps"]] : []),
                   ...Object.entries(selector.keys).map(([k, key]) => [k, locf("show {0}", label(key))]),
                   ["hover", loc("a cell's words and weight") + (views[0].spec.path ? loc("; beside the panels, the numbers behind it") : "")],
                   ["click / Enter", "enlarge a panel"]]);
}

function translatePage(root, data, pg) {
  const steps = pg.steps || [null], S = steps.length, cm = colormap(pg.cmap);
  const training = !!pg.steps && !!data.history;
  const state = {align: !!pg.align};
  const framed = pg.align ? (q, k) => state.align && pg.align[q] === k : null;
  const views = translateKinds(pg).map((kind) => translateView(kind, pg, S, cm, framed));
  const lines = sentenceLines(pg);
  const charts = training ? translateCharts(data) : null;

  const alignBox = pg.align ? el("label", {class: "note"},
    el("input", {type: "checkbox", checked: true, "data-control": "align", on: {change: (e) => {
      state.align = e.target.checked;
      views[0].grid.update(views[0].grid.weights);
    }}}), loc(" frame the source word that each target word translates")) : null;
  function select(key) {
    for (const v of views) {
      v.node.hidden = !(key === "all" || v.kind.key === key);
      v.hvNode.hidden = v.kind.key !== (key === "all" ? views[0].kind.key : key);
    }
    selector.mark(key);
    if (alignBox) alignBox.hidden = views[0].node.hidden;
    attnPage.state.show = key;
  }
  const selector = translateSelector(views, select);
  const bar = el("div", {class: "stepbar"});
  let player = null;
  if (S > 1) {
    player = stepPlayer(S, (i) => {
      for (const v of views) v.show(i);
      if (charts) charts.setCursor(steps[i]);
      player.info.textContent = training ? translateStepText(data, steps, i) : locf("step {0}", steps[i]);
      lines.set(pg.step_translations[i], locf("greedy, at step {0}", steps[i]) +
                (pg.step_translations[i] === pg.sentence.reference ? loc(": the reference, word for word") : ""));
      attnPage.state.step = {index: i, step: steps[i]};
    });
    bar.append(player.node);
  } else {
    lines.set(pg.sentence.translation, "");
  }
  // the page's keys, until a redraw (live.js) has replaced these views
  if (!attnPage.embedded) document.addEventListener("keydown", function keys(e) {
    if (!root.isConnected) { document.removeEventListener("keydown", keys); return; }
    const t = e.target;
    if (t !== document.body && t.tagName !== "BUTTON" && t.type !== "range") return;
    if (selector.keys[e.key]) { e.preventDefault(); select(selector.keys[e.key]); }
  });

  root.append(...[
    player ? bar : null,
    section(training ? locf("Training: {0}, {1} steps", data.task, data.steps) : "The translation", translateSummary(data, pg, training),
            training ? el("p", {class: "note", text: locf("The probe, {0} sentence {1}: its " +
                            "attention is teacher-forced on the reference (the rows are the reference's words); its " +
                            "translation is greedy.", loc(pg.probe.set), pg.probe.index + 1)}) : null, lines,
            charts ? el("div", {class: "row"}, charts.loss.node, charts.scores ? charts.scores.node : null) : null),
    section(training ? "Attention of the probe at the slider's step" : "Attention",
            loc(pg.model.arch === "bahdanau" ? "One attention, one scale 0 … 1" : "Blocks down, heads across, one scale 0 … 1") +
            (training ? loc(" for every step") : "") + loc(". Hover a cell for the two words and the weight") +
            (views[0].spec.path ? loc("; beside the panels, the numbers behind it (q, k, the score, the mask, the softmax)") : "") +
            loc("; click a panel to enlarge it.") +
            (pg.stride > 1 ? locf(" The page keeps one logged step in {0} (and the last); the curves have them all.", pg.stride) : ""),
            el("div", {class: "xcontrols"}, selector, alignBox), ...views.map((v) => v.node),
            translateKeys(!!player, selector, views)),
    section("Head view", pg.model.arch === "bahdanau"
      ? "The attention in BertViz's manner: queries (s(t′−1) at each target word) on the left, keys on the right, " +
        "a line's opacity is the weight; hover a word for its lines."
      : "The selected attention (with all three: the cross-attention) in BertViz's manner: " +
        "queries on the left, keys on the right, a line's opacity is the weight, one colour per head; " +
        "click a colour to hide its head, hover a word for its lines.", ...views.map((v) => v.hvNode)),
    pg.translations ? translationsTable(pg.translations) : null].filter(Boolean));
  select(views[0].kind.key);
  if (player) player.show(S - 1); // what was learnt; play runs it from the start
  attnPage.state.kind = "translate";
  attnPage.translate = {show: player ? player.show : null, select, views, charts};
}
