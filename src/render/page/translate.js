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

const BAHDANAU_NAME = "Bahdanau's attention, its query the decoder's previous state s(t′−1)";

// The Bahdanau model's one attention, as translateKinds' cross entry.
function bahdanauKind(pg) {
  const m = pg.model || {}, rnn = m.rnn === "lstm" ? "LSTM" : "GRU";
  const score = m.score === "dot" ? "scaled dot-product attention's (q·k/√d)" : "additive attention's";
  return {key: "cross", label: "attention (query s(t′−1))", tensor: pg.cross, q: pg.target, k: pg.source,
          qname: "target word", kname: "source word", causal: false,
          xlabel: "source words (keys = values: the encoder's states H)", ylabel: "target words (queries: s(t′−1))",
          title: loc("Bahdanau attention: the query the decoder's previous state s(t′−1), keys and values the encoder's states"),
          note: `A row is a target word being written at step t′; its weights over the source words are the ${score}, ` +
                "its query the decoder's state after the word before, s(t′−1). The context they weigh " +
                `goes into the ${rnn} with the word. One attention: no blocks, no heads; the alignment score reads it.`};
}

// The attentions a page can show: their names, tokens and words.
function translateKinds(pg) {
  if (pg.model.arch === "bahdanau") return [bahdanauKind(pg)];
  return [
    {key: "cross", label: "cross-attention", tensor: pg.cross, q: pg.target, k: pg.source,
     qname: "target word", kname: "source word", causal: false,
     xlabel: "source words (keys: the encoder's outputs)", ylabel: "target words (queries: the decoder)",
     title: loc("Cross-attention: Q from the decoder, K = V from the encoder"),
     note: "A row is a target word being written; its weights over the source words say where the " +
           "decoder looks while it writes that word. The last panel of a block is its heads averaged: in the " +
           "last block, what the alignment score reads."},
    {key: "encoder", label: "encoder self-attention", tensor: pg.encoder, q: pg.source, k: pg.source,
     qname: "source word", kname: "source word", causal: false,
     xlabel: "source words (keys)", ylabel: "source words (queries)",
     title: loc("The encoder's self-attention"),
     note: "Each source word over the whole source sentence (not causal; the padding is left out)."},
    {key: "decoder", label: "decoder self-attention", tensor: pg.decoder, q: pg.target, k: pg.decoder_input,
     qname: "target word", kname: "decoder input", causal: true,
     xlabel: "the decoder's input (keys: <bos>, then the words before)", ylabel: "target words (queries)",
     title: loc("The decoder's self-attention (causal)"),
     note: "A row is a target word being written; the columns are the decoder's input so far: <bos> and " +
           "the words written before it. Keys after the query are masked (striped)."},
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
    ? {qName: `s(t′−1) at step ${q}, writing ${word(kind.q, q)}`, kName: `H_${k}, the encoder's state at ${word(kind.k, k)}`,
       vName: `H_${k}`, outputName: `the context at step ${q}, Σⱼ wⱼ Hⱼ`}
    : {qName: `Q_${h + 1}[${q}], ${kind.qname} ${word(kind.q, q)}`, kName: `K_${h + 1}[${k}], ${kind.kname} ${word(kind.k, k)}`,
       vName: `V_${h + 1}[${k}]`, outputName: `head ${h + 1}'s output at ${word(kind.q, q)}, Σⱼ wⱼ vⱼ`};
  return {
    argv: run.argv, stdin: run.stdin,
    cell: (spec, r, h, q, k) => `${kind.key}:${r},${h},${q},${k}`,
    at: (doc, spec, r, h, q, k) => {
      const e = doc.explain, a = e[kind.key];
      const masked = a.masked[r][h][q][k] === 1;
      const c = {p: e.p, first: e.first, ...names(h, q, k), q: a.q[r][h][q], k: a.k[r][h][k], v: a.v[r][h][k],
                 score: a.scores[r][h][q][k], masked,
                 why: masked ? (kind.causal && k > q ? "causal: a key after the query" : "the source's <pad>") : null,
                 maskedScore: a.masked_scores[r][h][q][k], rowMax: a.row_max[r][h][q], rowSumExp: a.row_sum_exp[r][h][q],
                 weight: doc[weights][r][h][q][k], output: a.head_output[r][h][q]};
      if (e.score === "dot") c.dot = {scale: e.scale, scaled: a.scaled[r][h][q][k]};
      else c.additive = {hiddens: e.hiddens, first: e.first_hiddens, qa: a.qa[r][h][q], ka: a.ka[r][h][k],
                         tanh: a.tanh[r][h][q][k], w_v: e.w_v};
      return c;
    },
  };
}

// One attention's grid and head view, drawn at step i by show(i).
function translateView(kind, pg, S, cm, framed) {
  const att = tensor(kind.tensor).data, per = att.length / S, L = pg.model.layers;
  const bahdanau = pg.model.arch === "bahdanau";
  const rows = bahdanau ? [{name: "bahdanau", query_tokens: kind.q, key_tokens: kind.k, valid_lens: null, title: BAHDANAU_NAME}]
    : Array.from({length: L}, (_, l) => ({
      name: `${kind.key} block ${l + 1}`, query_tokens: kind.q, key_tokens: kind.k, valid_lens: null,
      title: `block ${l + 1}` + (L > 1 && l === L - 1 ? " (the last)" : ""),
    }));
  const spec = {rows, heads: pg.model.heads, Nq: kind.q.length, Nk: kind.k.length, weights: att.subarray(0, per),
                causal: kind.causal, cmap: cm, vmin: 0, vmax: 1, xlabel: kind.xlabel, ylabel: kind.ylabel,
                qname: kind.qname, kname: kind.kname, average: !bahdanau};
  if (bahdanau) spec.headName = () => "attention";
  spec.path = translatePath(kind, pg) || undefined;
  if (kind.key === "cross" && framed) {
    spec.framed = framed;
    spec.framedNote = (q) => `framed: “${kind.q[q]}” translates this source word`;
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
  const choices = views.map((v, i) => [v.kind.key, v.kind.label, String(i + 1)]);
  if (views.length > 1) choices.push(["all", "all three", String(views.length + 1)]);
  const buttons = choices.map(([key, label, k]) =>
    el("button", {type: "button", class: "seg-btn", "data-show": key, "aria-pressed": "false",
                  title: `${label} (key ${k})`, text: label, on: {click: () => select(key)}}));
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
  add("source", words(st.source));
  if (training) add("reference", words(st.reference));
  add(training ? "translation" : "translation (greedy)", tr, note);
  if (!training && st.reference !== null) {
    add("reference", words(st.reference));
    if (st.bleu !== null) add("BLEU", st.bleu.toFixed(3) + (st.translation === st.reference ? " (exact)" : ""));
  }
  dl.set = (text, what) => {
    tr.textContent = text === "" ? "(nothing: <eos> first)" : text;
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
    describe: (si, i) => [`step ${x[i]}`, `loss ${doc.history[i].loss.toFixed(4)}`]});
  const series = [{name: "held-out BLEU", x, y: col("heldout_bleu"), color: PALETTE[2]},
                  {name: "held-out exact", x, y: col("heldout_exact"), color: PALETTE[4], dash: [6, 4]},
                  {name: doc.arch === "bahdanau" ? "alignment (the attention)" : "alignment (last block)", x,
                   y: col("alignment"), color: PALETTE[1]}]
    .filter((s) => s.y.some(Number.isFinite));
  const scores = series.length ? lineChart({name: "scores", xlabel: "step", ylabel: "score", width: 560, height: 240,
    ylim: [0, 1], series, describe: (si, i) => [series[si].name, `step ${x[i]}: ${series[si].y[i].toFixed(3)}`]}) : null;
  return {loss, scores, setCursor: (s) => { loss.setCursor(s); if (scores) scores.setCursor(s); }};
}

// What the step line says about step s: its history entry's numbers.
function translateStepText(doc, steps, i) {
  const s = steps[i], h = doc.history.find((e) => e.step === s);
  const parts = [`step ${s} of ${steps[steps.length - 1]}`];
  if (!h) parts.push("before training");
  else {
    parts.push(`loss ${h.loss.toFixed(4)}`);
    if (h.heldout_bleu !== null) parts.push(`held-out BLEU ${h.heldout_bleu.toFixed(3)}`);
    if (h.heldout_exact !== null) parts.push(`exact ${pct(h.heldout_exact)}`);
    if (h.alignment !== null) parts.push(`alignment ${h.alignment.toFixed(3)}`);
  }
  return parts.join(" · ");
}

// The held-out translations after the last step, with a filter for the
// ones that are not exact.
function translationsTable(tr) {
  const table = el("table", {class: "data translations", "data-table": "translations"},
    el("tr", {}, el("th", {text: "#"}), ...["source", "translation", "reference"].map((t) => el("th", {class: "words", text: t})),
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
  const shown = tr.shown.length < tr.count ? `the first ${tr.shown.length} of ${tr.count}` : `all ${tr.count}`;
  return section("Held-out translations", `Greedy decoding after the last step (d2l's predict_seq2seq), ${shown} ` +
                 `held-out sentences; ${pct(tr.exact)} of all ${tr.count} are exact. BLEU as d2l's bleu(…, k=2).`,
                 el("label", {class: "note"}, only, ` only the ${misses} not translated exactly`),
                 el("div", {class: "table-box"}, table));
}

// The line under the heading: the model and, after training, its figures.
function translateSummary(data, pg, training) {
  const m = pg.model, d = data.final;
  const model = m.arch === "bahdanau"
    ? `Seq2Seq with Bahdanau attention, ${m.gru_layers} ${m.rnn === "lstm" ? "LSTM" : "GRU"} layer${m.gru_layers === 1 ? "" : "s"} a side, d ${m.hiddens}; ` +
      `one ${m.score === "dot" ? "dot-product " : ""}attention, its query the decoder's previous state s(t′−1).`
    : `Transformer encoder–decoder, ${m.layers} block${m.layers === 1 ? "" : "s"} a side, d ${m.hiddens}, ` +
                `${m.heads} heads.`;
  if (!training) return model;
  return model + ` After ${data.steps} steps: loss ${d.loss.toFixed(4)}` +
         (d.bleu !== null ? `, held-out BLEU ${d.bleu.toFixed(3)}` : "") + (d.exact !== null ? `, exact ${pct(d.exact)}` : "") +
         (d.alignment !== null ? `, alignment ${d.alignment.toFixed(3)}` : "") + ".";
}

// The keys of the page, listed on it.
function translateKeys(slider, selector, views) {
  const label = (key) => (key === "all" ? "all three" : views.find((v) => v.kind.key === key).kind.label);
  return keysNote([...(slider ? [["← →", "the previous or next logged step"], ["Home / End", "the first or last step"],
                                 ["▶ play", "run through the steps"]] : []),
                   ...Object.entries(selector.keys).map(([k, key]) => [k, "show " + label(key)]),
                   ["hover", "a cell's words and weight" + (views[0].spec.path ? "; beside the panels, the numbers behind it" : "")],
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
    }}}), " frame the source word that each target word translates") : null;
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
      player.info.textContent = training ? translateStepText(data, steps, i) : `step ${steps[i]}`;
      lines.set(pg.step_translations[i], `greedy, at step ${steps[i]}` +
                (pg.step_translations[i] === pg.sentence.reference ? ": the reference, word for word" : ""));
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
    section(training ? `Training: ${data.task}, ${data.steps} steps` : "The translation", translateSummary(data, pg, training),
            training ? el("p", {class: "note", text: `The probe, ${pg.probe.set} sentence ${pg.probe.index + 1}: its ` +
                            "attention is teacher-forced on the reference (the rows are the reference's words); its " +
                            "translation is greedy."}) : null, lines,
            charts ? el("div", {class: "row"}, charts.loss.node, charts.scores ? charts.scores.node : null) : null),
    section(training ? "Attention of the probe at the slider's step" : "Attention",
            (pg.model.arch === "bahdanau" ? "One attention, one scale 0 … 1" : "Blocks down, heads across, one scale 0 … 1") + (training ? " for every step" : "") +
            ". Hover a cell for the two words and the weight" +
            (views[0].spec.path ? "; beside the panels, the numbers behind it (q, k, the score, the mask, the softmax)" : "") +
            "; click a panel to enlarge it." +
            (pg.stride > 1 ? ` The page keeps one logged step in ${pg.stride} (and the last); the curves have them all.` : ""),
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
