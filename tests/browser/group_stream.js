// stream: training you watch (SPEC §14). On a train page a changed control
// trains again in the worker, and the page grows with each logged step as
// it comes (ATTN_PAGE_STREAM, cmd/train/train_page.h): the heading "step N
// of M", the slider, the curves; the streamed losses are native
// `attn train --json`'s; the stop button stops it and the page stays
// usable; the finished heading says what was trained and the finished
// data is native --html's.
const path = require("path");

module.exports = (h) => {
  const {check, attn, nativePageData, tmp, readJSON, open, shellSplit, SHOTS} = h;

  async function until(page, fn, ms, arg) {
    const t0 = Date.now();
    while (Date.now() - t0 < ms) {
      if (await page.evaluate(fn, arg)) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return false;
  }

  // what the page shows now: the training section's heading, the slider's
  // end, the stop button, the command line
  const state = (page) => page.evaluate(() => {
    const sec = document.querySelector("[data-train-view] section.view");
    const slider = document.querySelector('[data-train-view] input[type="range"]');
    return {heading: sec.querySelector("h2").textContent, note: sec.querySelector("p.note").textContent,
            stream: sec.dataset.stream || "", max: Number(slider.max), value: Number(slider.value),
            stop: Boolean(document.querySelector("[data-train-view] .live-stop")),
            command: document.getElementById("attn-command").textContent,
            runs: Number(document.querySelector(".live").dataset.runs || 0)};
  });

  // every streamed line (window.streamLog) and every heading the page
  // showed while it ran (window.headLog), from now on
  const listen = (page) => page.evaluate(() => {
    window.streamLog = [];
    window.headLog = [];
    const record = streamRecord;
    window.streamRecord = (st, rec) => {
      window.streamLog.push({run: rec.run, step: rec.step, history: rec.history, kept: Boolean(rec.attention),
                             head: rec.kind !== undefined});
      return record(st, rec);
    };
    const draw = streamDraw;
    window.streamDraw = (st, panel, how) => {
      draw(st, panel, how);
      const sec = document.querySelector("[data-train-view] section.view");
      window.headLog.push({heading: sec.querySelector("h2").textContent,
                           max: Number(document.querySelector('[data-train-view] input[type="range"]').max)});
    };
  });

  async function shot(page, name) {
    if (!SHOTS) return;
    require("fs").mkdirSync(SHOTS, {recursive: true});
    await page.screenshot({path: path.join(SHOTS, name + ".png"), fullPage: false});
  }

  return {stream: async () => {
    attn(["train", "--task", "reverse", "--steps", "400", "--html", "stream.html"]);
    const p = await open(tmp("stream.html"), "stream");
    const {page} = p;
    await page.setViewportSize({width: 1280, height: 1000});
    await until(page, () => document.querySelector(".live").dataset.ready === "1", 30000);

    // tick "without P": the page grows as the run streams
    await listen(page);
    const runs0 = (await state(page)).runs;
    let mid = null;
    await page.check("#attn-opt-no-posenc");
    const streaming = await until(page, () => /^Training: step [1-9]\d* of 400/.test(
      document.querySelector("[data-train-view] section.view h2").textContent), 60000);
    if (streaming) mid = await state(page);
    check("stream: a partial run is shown before the end (heading \"step N of 400\", a stop button)",
          streaming && mid.stream === "running" && mid.stop, JSON.stringify(mid));
    // the picture: half way, the curves drawn so far
    if (await until(page, () => {
      const m = /^Training: step (\d+) of 400/.exec(document.querySelector("[data-train-view] section.view h2").textContent);
      return m && Number(m[1]) >= 200;
    }, 20000)) await shot(page, "stream-mid-run");
    const done = await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n, 120000, runs0);
    check("stream: the run finishes", done);
    const fin = await state(page);
    const data = await page.evaluate(() => attnPage.data);
    const finalMax = data.page.runs[0].steps.length - 1;
    const heads = await page.evaluate(() => window.headLog);
    const partial = heads.filter((x) => /^Training: step \d+ of 400/.test(x.heading));
    check("stream: the slider grew, its end below the finished run's while it ran",
          partial.length >= 3 && partial[0].max < finalMax && partial.some((x, i) => i > 0 && x.max > partial[0].max),
          JSON.stringify(partial.map((x) => [x.heading.slice(0, 28), x.max])) + " final " + finalMax);

    // the streamed figures are native --json's, the finished data native --html's
    attn(["train", "--task", "reverse", "--steps", "400", "--no-posenc", "--json", "stream-nop.json"]);
    const json = readJSON("stream-nop.json");
    const log = await page.evaluate(() => window.streamLog);
    const streamed = log.filter((r) => r.history).map((r) => r.history);
    check("stream: every logged step streamed, its loss and accuracies native --json's, in order",
          streamed.length === json.history.length && streamed.every((s, i) => s.step === json.history[i].step &&
            s.loss === json.history[i].loss && s.train_accuracy === json.history[i].train_accuracy &&
            s.heldout_accuracy === json.history[i].heldout_accuracy),
          `${streamed.length} vs ${json.history.length}; ${JSON.stringify(streamed[1])} vs ${JSON.stringify(json.history[1])}`);
    const kept = log.filter((r) => r.kept).map((r) => r.step);
    check("stream: the steps streamed with attention are the finished page's steps",
          JSON.stringify(kept) === JSON.stringify(data.page.runs[0].steps), JSON.stringify(kept));
    const words = shellSplit(fin.command);
    const again = nativePageData(words.slice(1));
    delete again.page.command;
    delete data.page.command;
    check("stream: the finished page data is native --html's", JSON.stringify(again) === JSON.stringify(data));
    const want = `Training: reverse · without P · 1 layer, 4 heads · 400 steps · final loss ${json.final.loss.toFixed(4)}`;
    check("stream: the finished heading says what was trained", fin.heading === want && fin.stream === "" && !fin.stop,
          `${fin.heading} | want ${want}`);
    check("stream: the finished slider at the last step", fin.max === finalMax && fin.value === finalMax,
          JSON.stringify([fin.max, fin.value]));
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, "stream-finished");

    // a long run, stopped: no more steps, the heading says where, the page usable
    await listen(page);
    const runs1 = fin.runs;
    const steps = await page.$('[data-attn-option="--steps"]');
    await steps.fill("2000");
    await steps.dispatchEvent("input");
    const going = await until(page, () => {
      const m = /^Training: step (\d+) of 2000/.exec(document.querySelector("[data-train-view] section.view h2").textContent);
      return m && Number(m[1]) >= 100;
    }, 60000);
    check("stream: a run of 2000 steps streams", going);
    const before = await state(page);
    check("stream: it estimates the time left from the time per step", /about [\d.]+ s left \(from the time per step so far\)$/.test(before.note),
          before.note);
    await page.click("[data-train-view] .live-stop");
    const stopped = await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n, 10000, runs1);
    const n0 = (await page.evaluate(() => window.streamLog.length));
    await new Promise((r) => setTimeout(r, 1000));
    const st = await state(page);
    const n1 = (await page.evaluate(() => window.streamLog.length));
    const m = /^Training stopped at step (\d+) of 2000/.exec(st.heading);
    const last = await page.evaluate(() => window.streamLog.filter((r) => r.history).pop().step);
    check("stream: stop stops: no further step, the heading says where",
          stopped && n1 === n0 && m && Number(m[1]) === last && Number(m[1]) < 2000 && !st.stop && st.stream === "stopped",
          JSON.stringify([st.heading, n0, n1, last]));
    await page.keyboard.press("Home");
    const home = await page.evaluate(() => attnPage.state.step);
    check("stream: after the stop the slider still moves", home.index === 0 && home.step === 0, JSON.stringify(home));
    await shot(page, "stream-stopped");
    await steps.fill("40");
    await steps.dispatchEvent("input");
    const again2 = await until(page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n &&
      !document.querySelector(".live").dataset.busy &&
      /^Training: reverse/.test(document.querySelector("[data-train-view] section.view h2").textContent), // finished
      60000, runs1 + 1);
    const s2 = await state(page);
    const d2 = await page.evaluate(() => attnPage.data);
    const n2 = nativePageData(shellSplit(s2.command).slice(1));
    delete n2.page.command;
    delete d2.page.command;
    check("stream: and a control trains again, to native --html's data",
          again2 && s2.command.includes("--steps 40") && s2.command.includes("--no-posenc") &&
          JSON.stringify(n2) === JSON.stringify(d2) && /^Training: reverse · without P · .* · 40 steps · final loss/.test(s2.heading),
          JSON.stringify([s2.command, s2.heading]));
    await p.finish();

    // --compare-posenc: the runs stream one after the other, each named
    attn(["train", "--task", "reverse", "--steps", "40", "--compare-posenc", "--html", "stream-compare.html"]);
    const q = await open(tmp("stream-compare.html"), "stream-compare");
    await until(q.page, () => document.querySelector(".live").dataset.ready === "1", 30000);
    await listen(q.page);
    const c0 = await state(q.page);
    const cs = await q.page.$('[data-attn-option="--steps"]');
    await cs.fill("200");
    await cs.dispatchEvent("input");
    const cdone = await until(q.page, (n) => Number(document.querySelector(".live").dataset.runs || 0) > n, 120000, c0.runs);
    const ch = (await q.page.evaluate(() => window.headLog)).map((x) => x.heading);
    const c1 = await state(q.page);
    check("stream: --compare-posenc streams with P, then without P, each named",
          cdone && ch.some((x) => / · with P, run 1 of 2$/.test(x)) && ch.some((x) => / · without P, run 2 of 2$/.test(x)) &&
          c1.heading === "Training: reverse · with P and without P · 1 layer, 4 heads · 200 steps",
          JSON.stringify([ch.slice(0, 2), ch.slice(-2), c1.heading]));
    await q.finish();
  }};
};
