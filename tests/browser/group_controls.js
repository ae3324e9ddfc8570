// group 'controls': the pages' controls are instruments (SPEC §14):
// sliders showing the value in force, an input event reruns, heads moves
// only through the divisors of hiddens.
module.exports = (h) => ({controls: async () => {
  const {check, attn, nativePageData, tmp, open, shellSplit} = h;
  // polled with evaluate (the page's CSP refuses waitForFunction's eval)
  const poll = async (page, fn, arg) => {
    for (let k = 0; k < 1200; k++) {
      if (await page.evaluate(fn, arg)) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  };
  const waitRuns = (page, n) => poll(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
                                     !document.querySelector(".live").dataset.busy, n);
  const state = (page) => page.evaluate(() => ({
    values: Object.fromEntries(Array.from(document.querySelectorAll(".live [data-attn-option]"),
      (c) => [c.dataset.attnOption, {type: c.type, value: c.type === "checkbox" ? c.checked : c.value,
        beside: c.parentElement.querySelector(".live-number") ? c.parentElement.querySelector(".live-number").value : null}])),
    command: document.getElementById("attn-command").textContent,
    redrawn: Number(document.querySelector(".live-views").dataset.redrawn || 0),
    runs: Number(document.querySelector(".live").dataset.runs || 0),
    error: document.querySelector(".live-status").dataset.error,
    positions: Array.from(document.querySelectorAll("datalist option"), (o) => Number(o.value)),
    data: attnPage.data,
  }));
  // each page: its sliders show the run's values, from its own data
  const pages = [
    ["multihead", ["multihead"], {"--queries": "4", "--kv": "6", "--hiddens": "100", "--heads": "5"}],
    ["selfattn", ["selfattn", "--tokens", "a b c"], {"--hiddens": "100", "--heads": "5"}],
    ["score", ["score"], {"--queries": "1", "--score-hiddens": "8"}],
    ["posenc", ["posenc", "--dim", "20"], {"--dim": "20", "--steps": "60"}],
    ["train", ["train", "--steps", "30"], {"--steps": "30"}],
  ];
  for (const [name, argv, want] of pages) {
    const file = tmp(`controls-${name}.html`);
    attn([...argv, "--html", file]);
    const p = await open(file, `controls-${name}`);
    const st = await state(p.page);
    for (const [option, value] of Object.entries(want)) {
      const c = st.values[option];
      check(`controls ${name}: ${option} is a slider showing ${value}, its number beside`,
            c && c.type === "range" && c.value === value && c.beside === value, JSON.stringify(c));
    }
    // every other control shows the value in force, from the page's data
    const shown = {
      multihead: {"--valid-lens": "3,2", "--score": "dot", "--fill": "ones", "--seed": "0"},
      selfattn: {"--valid-lens": "none", "--score": "dot", "--seed": "0"},
      score: {"--valid-lens": "2,6", "--keys": "ones", "--seed": "0", "--score": ""},
      posenc: {"--check-relative": "10"}, // the slider of TO in 1:10
      train: {"--task": "reverse", "--seed": "0"},
    }[name] || {};
    for (const [option, value] of Object.entries(shown))
      check(`controls ${name}: ${option} shows ${value}`, st.values[option] && st.values[option].value === value,
            JSON.stringify(st.values[option]));
    const blanks = await p.page.evaluate(() => Array.from(document.querySelectorAll(
      ".live select option, .live input[placeholder]"), (e) => e.tagName === "OPTION" && e.textContent !== "(default)" ? null
        : (e.closest("[data-attn-option]") || e).dataset.attnOption).filter((o) => o));
    check(`controls ${name}: no "(default)" or "default" placeholder`, blanks.length === 0, blanks.join(" "));
    if (name === "posenc")
      check("controls posenc: layout shows interleaved, the run's", st.values["--layout"].value === "interleaved",
            JSON.stringify(st.values["--layout"]));
    if (name === "posenc")
      check("controls posenc: no --rope control (its views are P's; --rope --html is refused)",
            !("--rope" in st.values), Object.keys(st.values).join(" "));
    if (name === "selfattn")
      check("controls selfattn: no --queries control (selfattn's queries are its tokens)", !("--queries" in st.values),
            Object.keys(st.values).join(" "));
    await p.finish();
  }

  // multihead: an input event alone (no change) reruns with the new value,
  // whose data is attn's own for that command
  const file = tmp("controls-mh.html");
  attn(["multihead", "--html", file]);
  const p = await open(file, "controls-multihead-moved");
  const page = p.page;
  await poll(page, () => document.querySelector(".live").dataset.ready === "1");
  let st = await state(page);
  check("controls: heads positions are the divisors of 100",
        JSON.stringify(st.positions) === JSON.stringify([1, 2, 4, 5, 10, 20, 25, 50, 100]), JSON.stringify(st.positions));
  const move = (option, value) => page.evaluate(([option, value]) => {
    const c = document.querySelector(`[data-attn-option="${option}"]`);
    c.value = value;
    c.dispatchEvent(new Event("input", {bubbles: true}));
  }, [option, value]);
  await move("--hiddens", "12"); // heads 5 no longer divides: the nearest divisor, 4 (6 is as near: the smaller)
  check("controls: hiddens 12 reruns on its input event", await waitRuns(page, st.runs));
  st = await state(page);
  check("controls: heads snapped to 4, the positions the divisors of 12",
        st.values["--heads"].value === "4" && JSON.stringify(st.positions) === JSON.stringify([1, 2, 3, 4, 6, 12]),
        JSON.stringify([st.values["--heads"], st.positions]));
  check("controls: #attn-command has --hiddens 12 --heads 4", st.command === "attn multihead --hiddens 12 --heads 4",
        st.command);
  const again = nativePageData(shellSplit(st.command).slice(1));
  delete again.page.command;
  delete st.data.page.command;
  check("controls: the redrawn view's data is attn's own for that line", st.redrawn >= 1 && st.error === undefined &&
        JSON.stringify(again) === JSON.stringify(st.data), JSON.stringify([st.redrawn, st.error]));
  // several values in one frame: one run, of the last
  const runs0 = st.runs;
  await page.evaluate(() => { // count the module's runs
    const inner = attnLive.pageData;
    window.moduleRuns = 0;
    attnLive.pageData = (...a) => { window.moduleRuns++; return inner(...a); };
  });
  await page.evaluate(() => {
    const c = document.querySelector('[data-attn-option="--heads"]');
    for (const v of ["1", "2", "3", "6"]) {
      c.value = v;
      c.dispatchEvent(new Event("input", {bubbles: true}));
    }
  });
  await waitRuns(page, runs0);
  await new Promise((r) => setTimeout(r, 300));
  st = await state(page);
  const moduleRuns = await page.evaluate(() => window.moduleRuns);
  check("controls: four values in one frame run the module once, the last", st.runs === runs0 + 1 && moduleRuns === 1 &&
        st.command === "attn multihead --hiddens 12 --heads 6" && st.data.num_heads === 6,
        JSON.stringify([st.runs - runs0, moduleRuns, st.command, st.data.num_heads]));
  // hiddens below heads: heads comes down to a divisor (heads 6, hiddens 4: 4)
  const runs1 = st.runs;
  await move("--hiddens", "4");
  await waitRuns(page, runs1);
  st = await state(page);
  check("controls: hiddens 4 under heads 6 gives heads 4", st.values["--heads"].value === "4" &&
        st.command === "attn multihead --hiddens 4 --heads 4" && st.error === undefined, st.command);
  await p.finish();

  // other runs' values: additive scoring, random inputs, a seed, score's
  // one scoring and random keys, pool's σ list and epochs, train's task
  const others = [
    ["multihead", ["multihead", "--score", "additive", "--fill", "random", "--valid-lens", "2,5", "--kv", "5"],
     {"--score": "additive", "--fill": "random", "--valid-lens": "2,5"}],
    ["score", ["score", "--score", "dot", "--keys", "random", "--valid-lens", "1,3"],
     {"--score": "dot", "--keys": "random", "--valid-lens": "1,3"}],
    ["pool", ["pool", "--sigma", "0.2,0.5", "--epochs", "7"], {"--sigma": "0.2,0.5", "--epochs": "7", "--lr": "0.5"}],
    ["train", ["train", "--task", "previous", "--steps", "5"], {"--task": "previous"}],
  ];
  for (const [name, argv, want] of others) {
    const file = tmp(`controls-other-${name}.html`);
    attn([...argv, "--html", file]);
    // the data's values, not the command's words: the command line made bare
    const o = await open(file, `controls-other-${name}`);
    const vals = await o.page.evaluate(([specs, name]) => {
      attnPage.data.page.command = "attn " + name;
      return Object.fromEntries(LIVE_CONTROLS[name].map((sp) => [sp.option, liveInForce([name], sp, attnPage.data)]));
    }, [null, name]);
    for (const [option, value] of Object.entries(want))
      check(`controls ${name} (${argv.slice(1).join(" ")}): ${option} in force from the data is ${value}`,
            vals[option] === value, JSON.stringify(vals[option]));
    await o.finish();
  }

  // score's hiddens: only the additive scorer has them; with general, dot
  // or sum the slider is disabled at attn's default, and a scoring that
  // has none takes --score-hiddens out of the command (attn refuses it)
  {
    const g = tmp("controls-score-general.html");
    attn(["score", "--score", "general", "--html", g]);
    const r = await open(g, "controls-score-general");
    let st = await state(r.page);
    const hid = await r.page.evaluate(() => {
      const x = document.querySelector('[data-attn-option="--score-hiddens"]');
      return {disabled: x.disabled, value: x.value, why: x.closest("label").title,
              placeholder: x.closest("label").querySelector("[placeholder]") !== null};
    });
    check("controls score general: hiddens disabled at 8, says why, no placeholder",
          hid.disabled && hid.value === "8" && /additive/.test(hid.why) && !hid.placeholder, JSON.stringify(hid));
    await r.finish();
    const a = tmp("controls-score-additive.html");
    attn(["score", "--score", "additive", "--score-hiddens", "16", "--html", a]);
    const q = await open(a, "controls-score-additive");
    await poll(q.page, () => document.querySelector(".live").dataset.ready === "1");
    st = await state(q.page);
    check("controls score additive: hiddens 16 shown, enabled", st.values["--score-hiddens"].value === "16" &&
          st.values["--score-hiddens"].beside === "16", JSON.stringify(st.values["--score-hiddens"]));
    await q.page.selectOption('[data-attn-option="--score"]', "dot");
    check("controls score: dot reruns", await waitRuns(q.page, st.runs));
    const s2 = await state(q.page);
    const off = await q.page.evaluate(() => document.querySelector('[data-attn-option="--score-hiddens"]').disabled);
    check("controls score: dot drops --score-hiddens from the command, runs without error, hiddens off at 8",
          s2.command === "attn score --score dot" && s2.error === undefined && off &&
          s2.values["--score-hiddens"].value === "8", `${s2.command} ${s2.error} ${off}`);
    await q.finish();
  }

  // complexity: n and d as log sliders, k a slider, each at the run's value
  {
    const f = tmp("controls-complexity.html");
    attn(["complexity", "--html", f]);
    const r = await open(f, "controls-complexity");
    await poll(r.page, () => document.querySelector(".live").dataset.ready === "1");
    let st = await state(r.page);
    check("controls complexity: n 100, d 512, k 3 beside their sliders, no placeholder",
          ["--n", "--d", "--k"].every((o) => st.values[o].type === "range") &&
          st.values["--n"].beside === "100" && st.values["--d"].beside === "512" && st.values["--k"].beside === "3",
          JSON.stringify(st.values));
    await r.page.evaluate(() => {
      const x = document.querySelector('[data-attn-option="--n"]');
      x.value = "600"; // 10^(5 × 0.6) on the log scale from 1 to 100000
      x.dispatchEvent(new Event("input", {bubbles: true}));
    });
    check("controls complexity: n's input event reruns", await waitRuns(r.page, st.runs));
    st = await state(r.page);
    check("controls complexity: n at 1000, the command and the heading follow",
          st.values["--n"].beside === "1000" && st.command === "attn complexity --n 1000" && st.error === undefined &&
          st.data.n === 1000, `${st.command} ${st.values["--n"].beside} ${st.data && st.data.n}`);
    await r.finish();
  }

  // valid lengths: a slider per example, up to the keys; its input reruns
  {
    const f = tmp("controls-lens.html");
    attn(["multihead", "--html", f]);
    const r = await open(f, "controls-multihead-lens");
    await poll(r.page, () => document.querySelector(".live").dataset.ready === "1");
    const lens = () => r.page.evaluate(() => Array.from(
      document.querySelectorAll('[data-attn-option="--valid-lens"] input[type=range]'),
      (x) => [x.value, x.max, x.nextElementSibling.textContent]));
    const l0 = await lens();
    check("controls lens: two sliders, 3 and 2, up to the 6 keys, numbers beside",
          JSON.stringify(l0) === JSON.stringify([["3", "6", "3"], ["2", "6", "2"]]), JSON.stringify(l0));
    let s0 = await state(r.page);
    await r.page.evaluate(() => {
      const x = document.querySelector('[data-attn-example="1"]');
      x.value = "5";
      x.dispatchEvent(new Event("input", {bubbles: true}));
    });
    check("controls lens: example 1's slider at 5 reruns", await waitRuns(r.page, s0.runs));
    let s1 = await state(r.page);
    check("controls lens: the command has --valid-lens 3,5", s1.command === "attn multihead --valid-lens 3,5", s1.command);
    const nd = nativePageData(shellSplit(s1.command).slice(1));
    delete nd.page.command;
    delete s1.data.page.command;
    check("controls lens: the redrawn data is attn's own, valid_lens [3, 5]", s1.error === undefined &&
          JSON.stringify(nd) === JSON.stringify(s1.data) && JSON.stringify(s1.data.valid_lens) === "[3,5]",
          JSON.stringify([s1.error, s1.data.valid_lens]));
    // fewer keys: the lengths come down with them
    s0 = s1;
    await r.page.evaluate(() => {
      const x = document.querySelector('[data-attn-option="--kv"]');
      x.value = "4";
      x.dispatchEvent(new Event("input", {bubbles: true}));
    });
    await waitRuns(r.page, s0.runs);
    s1 = await state(r.page);
    const l1 = await lens();
    check("controls lens: --kv 4 brings example 1's 5 down to 4, the bound 4",
          s1.command === "attn multihead --kv 4 --valid-lens 3,4" && s1.error === undefined &&
          JSON.stringify(l1) === JSON.stringify([["3", "4", "3"], ["4", "4", "4"]]), JSON.stringify([s1.command, l1]));
    await r.finish();
  }

  // pool: --method and --kernel as check boxes of the valid names
  const poolFile = tmp("controls-pool.html");
  attn(["pool", "--html", poolFile]);
  const q = await open(poolFile, "controls-pool");
  await poll(q.page, () => document.querySelector(".live").dataset.ready === "1");
  const boxes = (option) => q.page.evaluate((option) => Array.from(
    document.querySelectorAll(`[data-attn-option="${option}"] input[type=checkbox]`),
    (b) => b.dataset.attnChoice + (b.checked ? "+" : "-")).join(" "), option);
  const m0 = await boxes("--method"), k0 = await boxes("--kernel");
  check("controls pool: --method's boxes, the run's three checked",
        m0 === "average+ nonparametric+ parametric+ additive-", m0);
  check("controls pool: --kernel's boxes, gaussian checked", k0 === "gaussian+ boxcar- constant- epanechikov-", k0);
  const r0 = (await state(q.page)).runs;
  await q.page.evaluate(() => {
    for (const name of ["average", "parametric"])
      document.querySelector(`[data-attn-option="--method"] [data-attn-choice="${name}"]`).click();
    document.querySelector('[data-attn-option="--kernel"] [data-attn-choice="boxcar"]').click();
  });
  await waitRuns(q.page, r0);
  await poll(q.page, () => /boxcar/.test(document.getElementById("attn-command").textContent) &&
             !document.querySelector(".live").dataset.busy);
  const ps = await state(q.page);
  check("controls pool: the boxes give --method nonparametric --kernel gaussian,boxcar",
        ps.command === "attn pool --method nonparametric --kernel gaussian,boxcar", ps.command);
  const pd = nativePageData(shellSplit(ps.command).slice(1));
  delete pd.page.command;
  delete ps.data.page.command;
  check("controls pool: the redrawn data is attn's own for that line", ps.error === undefined &&
        JSON.stringify(pd) === JSON.stringify(ps.data) && ps.data.results.length === 2,
        JSON.stringify([ps.error, ps.data.results.length]));
  await q.finish();

  // posenc: δ's slider moves TO of FROM:TO, up to steps - 1
  {
    const f = tmp("controls-posenc-delta.html");
    attn(["posenc", "--dim", "20", "--html", f]);
    const r = await open(f, "controls-posenc-delta");
    await poll(r.page, () => document.querySelector(".live").dataset.ready === "1");
    const s0 = await state(r.page);
    const max = await r.page.evaluate(() => document.querySelector('[data-attn-option="--check-relative"]').max);
    check("controls posenc: δ a slider at 10 (of 1:10), 10 beside, up to 59",
          s0.values["--check-relative"].type === "range" && s0.values["--check-relative"].beside === "10" && max === "59",
          JSON.stringify([s0.values["--check-relative"], max]));
    await r.page.evaluate(() => {
      const c = document.querySelector('[data-attn-option="--check-relative"]');
      c.value = "25";
      c.dispatchEvent(new Event("input", {bubbles: true}));
    });
    check("controls posenc: δ's input reruns", await waitRuns(r.page, s0.runs));
    const s1 = await state(r.page);
    check("controls posenc: the command has --check-relative 1:25", s1.command === "attn posenc --dim 20 --check-relative 1:25",
          s1.command);
    const nd = nativePageData(shellSplit(s1.command).slice(1));
    delete nd.page.command;
    delete s1.data.page.command;
    check("controls posenc: the redrawn data is attn's own, 25 deltas", s1.error === undefined &&
          JSON.stringify(nd) === JSON.stringify(s1.data) && s1.data.page.check_relative.length === 25,
          JSON.stringify([s1.error, s1.data.page.check_relative.length]));
    await r.finish();
  }

  // pool: σ and lr as log-scale sliders, their number beside; a slider's
  // input reruns with the value beside
  {
    const f = tmp("controls-pool-sliders.html");
    attn(["pool", "--html", f]);
    const r = await open(f, "controls-pool-sliders");
    await poll(r.page, () => document.querySelector(".live").dataset.ready === "1");
    const s0 = await state(r.page);
    check("controls pool: σ a log slider at 1 (position 667 of 0.01…10), 1 beside",
          s0.values["--sigma"].type === "range" && s0.values["--sigma"].value === "667" && s0.values["--sigma"].beside === "1",
          JSON.stringify(s0.values["--sigma"]));
    check("controls pool: lr a log slider at 0.5 (position 740 of 0.0001…10: log10(5000)/5), 0.5 beside",
          s0.values["--lr"].type === "range" && s0.values["--lr"].value === "740" && s0.values["--lr"].beside === "0.5",
          JSON.stringify(s0.values["--lr"]));
    await r.page.evaluate(() => {
      const c = document.querySelector('[data-attn-option="--sigma"]');
      c.value = "500"; // 0.01 · 1000^0.5 = 0.316
      c.dispatchEvent(new Event("input", {bubbles: true}));
    });
    check("controls pool: σ's input reruns", await waitRuns(r.page, s0.runs));
    const s1 = await state(r.page);
    check("controls pool: σ at 0.316, beside and in the command", s1.values["--sigma"].beside === "0.316" &&
          s1.command === "attn pool --sigma 0.316", s1.command);
    const nd = nativePageData(shellSplit(s1.command).slice(1));
    delete nd.page.command;
    delete s1.data.page.command;
    check("controls pool: the redrawn data is attn's own, σ 0.316", s1.error === undefined &&
          JSON.stringify(nd) === JSON.stringify(s1.data) && s1.data.results[1].sigma === 0.316,
          JSON.stringify([s1.error, s1.data.results[1].sigma]));
    await r.finish();
    // a list of widths: a text field showing it
    const g = tmp("controls-pool-list.html");
    attn(["pool", "--sigma", "0.2,0.5", "--html", g]);
    const t = await open(g, "controls-pool-list");
    const st = await state(t.page);
    check("controls pool: --sigma 0.2,0.5 a text field showing the list", st.values["--sigma"].type === "text" &&
          st.values["--sigma"].value === "0.2,0.5", JSON.stringify(st.values["--sigma"]));
    await t.finish();
  }
}});
