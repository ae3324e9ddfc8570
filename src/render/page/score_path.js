// score_path.js — attn score's page: the numbers behind a weight (SPEC
// §14). The page's grid has a row per scoring function (pg.rows, named
// additive, dot, general or sum) and a panel per example (pg.column
// "example"); a weight's path is its result's "explain" member of `attn
// score … --explain --json -` (cmd/score/score_explain.h), run once by the
// page's module. Dot and additive scoring draw pathLines' own lines; the
// general and sum scores theirs (scoringLines).

// The scoring parts of cell (b, q, k) of a result's explain member e, as
// pathLines draws them: {dot} or {additive}, or scoringLines.
function scoreParts(e, b, q, k) {
  const score = e.scores[b][q][k];
  if (e.score === "dot") return {dot: {scale: e.scale, scaled: e.scaled[b][q][k]}};
  if (e.score === "additive")
    return {additive: {hiddens: e.hiddens, first: e.first_hiddens, qa: e.qa[b][q], ka: e.ka[b][k],
                       tanh: e.tanh[b][q][k], w_v: e.w_v}};
  if (e.score === "general") {
    const Fk = e.first_k, Dk = e.key_size;
    return {scoringLines: [
      ["qw", `W(q) = qᵀ W (${Fk < Dk ? locf("first {0} of ", Fk) : ""}${locf("key size {0}", Dk)})`, e.qw[b][q], Dk],
      ["score", "W(q)·k = qᵀ W k =", score]]};
  }
  return {scoringLines: [["q_sum", "Σᵢ qᵢ =", e.q_sum[b][q]], ["k_sum", "Σᵢ kᵢ =", e.k_sum[b][k]],
                         ["score", "Σq + Σk = Σᵢ (qᵢ + kᵢ) =", score]]};
}

// Cell (q, k) of example b in row r (a scoring function) of a score
// --explain --json document, for pathLines.
function scorePath(doc, spec, r, b, q, k) {
  const row = spec.rows[r];
  const res = doc.results.find((x) => x.score === row.name), e = res.explain;
  const c = {p: e.query_size, first: e.first_q, kSize: e.key_size, vSize: e.value_size,
             qLabel: `q = ${locf("query {0} of example {1}", q, b)} (${e.first_q < e.query_size ? locf("first {0} of ", e.first_q) : ""}` +
                     `d = ${e.query_size})`,
             kName: locf("key {0}", k), vName: locf("value {0}", k), q: e.q[b][q], k: e.k[b][k], v: e.v[b][k],
             score: e.scores[b][q][k], masked: e.masked[b][q][k] === 1, why: maskReason(row, false, q, k, b),
             maskedScore: e.masked_scores[b][q][k], rowMax: e.row_max[b][q], rowSumExp: e.row_sum_exp[b][q],
             weight: res.attention_weights[b][q][k], outputName: locf("output of query {0}, Σⱼ wⱼ vⱼ", q),
             output: e.output[b][q]};
  return Object.assign(c, scoreParts(e, b, q, k));
}

// Panel (r, h) is scoring function rows[r].name on example h.
CELL_PATHS.score = (argv, pg) => pg.column === "example" ? {
  argv,
  cell: (spec, r, h, q, k) => `${spec.rows[r].name},${h},${q},${k}`,
  at: (doc, spec, r, h, q, k) => scorePath(doc, spec, r, h, q, k),
} : null;
