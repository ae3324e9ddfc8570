// tour.js — the page of `attn tour --html`: every step in order, each with
// its heading, formula and what to look for, the command lines as a
// learner types them, what they printed, and the interactive view of a
// run (the same views as the commands' own pages, each with the controls
// of its command's page, live.js) or, for a command without a page, its
// figure as a picture. A change of a view's controls reruns the printed
// block above it too: the text attn prints for the new command.

// Its words in 中文 (common.js's PAGE_ZH: this page's only).
Object.assign(PAGE_ZH, {
  "recompute {0}": "重新计算 {0}",
  "The same token in different sentences (cosine similarity):": "同一个词元在不同句子中（余弦相似度）：",
  "explore: ": "探索：",
  "The attention chapters of Dive into Deep Learning, step by step: every number below was printed by the command above it.": "《动手学深度学习》的注意力各章，一步一步：下面的每个数都由它上方的命令打印。",
  "Step {0} · {1}": "第 {0} 步 · {1}",
  "step {0}, run {1}": "第 {0} 步，第 {1} 次运行",
  "figure: ": "图：",
});

// A run's figure: {"name", "type": "image/png", "base64"}, shown from a
// data: URL (the page loads nothing from outside itself).
function tourPicture(pic) {
  if (pic.type !== "image/png" || !/^[A-Za-z0-9+/]*={0,2}$/.test(pic.base64)) return null;
  return el("figure", {class: "tour-picture"},
    el("img", {src: "data:image/png;base64," + pic.base64, alt: pic.name, "data-picture": pic.name}),
    el("figcaption", {text: pic.name}));
}

// The lines of a printed block that compare one token across sentences
// (selfattn's "The same token in different sentences (cosine
// similarity):" and the lines under it), shown again under the block,
// where a long block's scrolling cannot hide them; "" when none.
const TOUR_SAME = "The same token in different sentences (cosine similarity):";
function tourSameTokens(text) {
  const at = text.indexOf(loc(TOUR_SAME)); // as the module prints it, in the page's language
  if (at < 0) return "";
  const lines = text.slice(at).split("\n");
  const end = lines.findIndex((l, i) => i > 0 && !l.startsWith("  "));
  return lines.slice(0, end < 0 ? lines.length : end).join("\n");
}
function tourSameNote(text, note) {
  const same = tourSameTokens(text);
  note = note || el("pre", {class: "tour-same", "data-same-tokens": ""});
  note.textContent = same;
  note.hidden = !same;
  return note;
}

// A run's printed block, rerun with its view: what `attn LINE` prints for
// a person (the module in text mode, attnLive.runText), the block's "$"
// line showing LINE. A newer line wins over a run still in flight; a run
// that fails shows attn's one line in the block.
function tourRerunText(block, cmdline, line) {
  const argv = shellWords(line).slice(1);
  const mine = String(Number(block.dataset.serial || 0) + 1);
  block.dataset.serial = mine;
  block.dataset.busy = "1";
  cmdline.textContent = "$ " + line;
  return attnLive.runText(argv, {worker: liveInWorker(argv)}).then((text) => {
    if (block.dataset.serial !== mine) return;
    block.textContent = text;
    block.removeAttribute("data-error");
    if (block.tourSame) tourSameNote(text, block.tourSame);
  }, (e) => {
    if (block.dataset.serial !== mine) return;
    block.textContent = e.message;
    block.dataset.error = String(e.code ?? "");
  }).finally(() => {
    if (block.dataset.serial !== mine) return;
    delete block.dataset.busy;
    block.dataset.command = line;
    block.dataset.reruns = String(Number(block.dataset.reruns || 0) + 1);
  });
}

// A run's view in a <details>; when its command has controls (live.js),
// its own panel above it, which reruns that command only and draws this
// view again (key: the panel's ids, label: its name), and the run's
// printed block (text, its "$" line cmdline) again. run.view follows the
// view, so attnPage.data holds what the page shows. The sweep's view
// (scale_sweep) has no controls: the selfattn panel's are not its options;
function tourView(run, key, label, text, cmdline) {
  let box = el("div", {class: "tour-view", "data-kind": run.view.page.kind});
  const summary = el("summary", {text: loc("explore: ") + run.command});
  const details = el("details", {open: true}, summary);
  const argv = liveArgv(run);
  // nor has the ViT's (kind vit): its picks rerun `attn vit`, not the training
  if (argv && LIVE_CONTROLS[argv[0]] && argv[0] === run.view.command &&
      run.view.page.kind !== "scale_sweep" && run.view.page.kind !== "vit") {
    details.append(liveControls(argv, (next, line) => {
      const build = PAGE_KINDS[next.page.kind];
      if (!build || next.page.kind === "tour") throw new Error("the tour cannot draw a view of kind " + next.page.kind);
      const fresh = el("div", {class: "tour-view", "data-kind": next.page.kind});
      fresh.dataset.redrawn = String(Number(box.dataset.redrawn || 0) + 1);
      box.replaceWith(fresh);
      box = fresh;
      run.view = next;
      summary.textContent = loc("explore: ") + line;
      build(fresh, next, next.page);
      attnPage.state.kind = "tour";
      if (text) tourRerunText(text, cmdline, line);
    }, {key, label: locf("recompute {0}", label), data: run.view}));
  }
  details.append(box);
  PAGE_KINDS[run.view.page.kind](box, run.view, run.view.page);
  return details;
}

function tourPage(root, data) {
  attnPage.embedded = true; // views share the page: no page-wide keys
  const toc = el("nav", {class: "toc", "aria-label": loc("steps")});
  const ol = el("ol");
  toc.append(ol);
  root.append(el("p", {class: "note", text: loc("The attention chapters of Dive into Deep Learning, step by step: " +
                                                "every number below was printed by the command above it.")}), toc);
  for (const st of data.steps) {
    const id = `step-${st.number}`;
    ol.append(el("li", {}, el("a", {href: "#" + id, text: st.title})));
    const sec = el("section", {class: "view tour-step", id, "data-step": st.name},
      el("h2", {text: locf("Step {0} · {1}", st.number, st.title)}),
      el("p", {class: "note", text: st.where}),
      el("pre", {class: "formula", text: st.text}));
    st.runs.forEach((run, j) => {
      const cmdline = el("code", {text: "$ " + run.command});
      const text = run.output ? el("pre", {class: "output", text: run.output}) : null;
      sec.append(el("pre", {class: "cmdline"}, cmdline));
      if (text) sec.append(text);
      if (text && tourSameTokens(run.output)) sec.append(text.tourSame = tourSameNote(run.output));
      if (run.view) {
        sec.append(tourView(run, `${id}-run-${j + 1}`, locf("step {0}, run {1}", st.number, j + 1), text, cmdline));
      } else if (run.picture) {
        sec.append(el("details", {open: true}, el("summary", {text: loc("figure: ") + run.picture.name}),
                      tourPicture(run.picture)));
      }
    });
    if (st.exercises) {
      sec.append(el("p", {class: "note", text: loc("Exercises (练习), each an experiment:")}),
                 el("pre", {class: "cmdline"}, el("code", {text: st.exercises})));
    }
    root.append(sec);
  }
  attnPage.state.kind = "tour";
}
