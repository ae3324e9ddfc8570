// tour.js — the page of `attn tour --html`: every step in order, each with
// its heading, formula and what to look for, the command lines as a
// learner types them, what they printed, and the interactive view of a
// run (the same views as the commands' own pages, each with the controls
// of its command's page, live.js) or, for a command without a page, its
// figure as a picture.

// A run's figure: {"name", "type": "image/png", "base64"}, shown from a
// data: URL (the page loads nothing from outside itself).
function tourPicture(pic) {
  if (pic.type !== "image/png" || !/^[A-Za-z0-9+/]*={0,2}$/.test(pic.base64)) return null;
  return el("figure", {class: "tour-picture"},
    el("img", {src: "data:image/png;base64," + pic.base64, alt: pic.name, "data-picture": pic.name}),
    el("figcaption", {text: pic.name}));
}

// A run's view in a <details>; when its command has controls (live.js),
// its own panel above it, which reruns that command only and draws this
// view again (key: the panel's ids, label: its name). run.view follows
// the view, so attnPage.data holds what the page shows.
function tourView(run, key, label) {
  let box = el("div", {class: "tour-view", "data-kind": run.view.page.kind});
  const summary = el("summary", {text: "explore: " + run.command});
  const details = el("details", {open: true}, summary);
  const argv = liveArgv(run);
  if (argv && LIVE_CONTROLS[argv[0]] && argv[0] === run.view.command) {
    details.append(liveControls(argv, (next, line) => {
      const build = PAGE_KINDS[next.page.kind];
      if (!build || next.page.kind === "tour") throw new Error("the tour cannot draw a view of kind " + next.page.kind);
      const fresh = el("div", {class: "tour-view", "data-kind": next.page.kind});
      fresh.dataset.redrawn = String(Number(box.dataset.redrawn || 0) + 1);
      box.replaceWith(fresh);
      box = fresh;
      run.view = next;
      summary.textContent = "explore: " + line;
      build(fresh, next, next.page);
      attnPage.state.kind = "tour";
    }, {key, label: "recompute " + label}));
  }
  details.append(box);
  PAGE_KINDS[run.view.page.kind](box, run.view, run.view.page);
  return details;
}

function tourPage(root, data) {
  attnPage.embedded = true; // views share the page: no page-wide keys
  const toc = el("nav", {class: "toc", "aria-label": "steps"});
  const ol = el("ol");
  toc.append(ol);
  root.append(el("p", {class: "note", text: "The attention chapters of Dive into Deep Learning, step by step: " +
                                            "every number below was printed by the command above it."}), toc);
  for (const st of data.steps) {
    const id = `step-${st.number}`;
    ol.append(el("li", {}, el("a", {href: "#" + id, text: st.title})));
    const sec = el("section", {class: "view tour-step", id, "data-step": st.name},
      el("h2", {text: `Step ${st.number} · ${st.title}`}),
      el("p", {class: "note", text: st.where}),
      el("pre", {class: "formula", text: st.text}));
    st.runs.forEach((run, j) => {
      sec.append(el("pre", {class: "cmdline"}, el("code", {text: "$ " + run.command})));
      if (run.output) sec.append(el("pre", {class: "output", text: run.output}));
      if (run.view) {
        sec.append(tourView(run, `${id}-run-${j + 1}`, `step ${st.number}, run ${j + 1}`));
      } else if (run.picture) {
        sec.append(el("details", {open: true}, el("summary", {text: "figure: " + run.picture.name}),
                      tourPicture(run.picture)));
      }
    });
    if (st.exercises) {
      sec.append(el("p", {class: "note", text: "Exercises (练习), each an experiment:"}),
                 el("pre", {class: "cmdline"}, el("code", {text: st.exercises})));
    }
    root.append(sec);
  }
  attnPage.state.kind = "tour";
}
