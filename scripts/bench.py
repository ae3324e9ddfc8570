#!/usr/bin/env python3
"""scripts/bench.py — the tables of scripts/bench (see there): attn against
ONNX Runtime, PyTorch and numpy + matplotlib. Run by scripts/bench, which
builds attn and installs what this needs; its arguments are scripts/bench's
set-up: ROOT RUNS REF_BLAS_PATH OPENBLAS_PATH ORT_MODULES MODE."""
import atexit, glob, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

root, runs, ref_path, ob_path, ort_modules, mode = sys.argv[1:7]
runs, layers_only = int(runs), mode == "layers"
train_only = mode in ("train", "induction", "translate", "vit")
train_tasks = (("induction",) if mode == "induction" else () if mode in ("translate", "vit")
               else ("reverse", "previous", "apple", "induction"))
bench_translate = not layers_only and mode not in ("induction", "vit")
bench_vit = not layers_only and mode in ("all", "train", "vit")
attn = os.path.join(root, "build", "attn")
py = "/usr/bin/python3"  # Debian's, with torch, numpy and matplotlib
bench_torch = os.path.join(root, "scripts", "bench_torch.py")
bench_mpl = os.path.join(root, "scripts", "bench_posenc_mpl.py")
bench_ort = os.path.join(root, "scripts", "bench_ort.py")
THREADS = 2
tmp = tempfile.mkdtemp(prefix="attn-bench-")
atexit.register(shutil.rmtree, tmp, True)
out = lambda name: os.path.join(tmp, name)
median = statistics.median


def env_for(blas):
    """The environment of a Python process: its BLAS, 2 threads."""
    e = dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS))
    old = e.get("LD_LIBRARY_PATH")
    if blas == "ref":
        e["LD_LIBRARY_PATH"] = ref_path + (":" + old if old else "")
    else:
        e["LD_LIBRARY_PATH"] = ob_path + (":" + old if old else "")
        # let OpenBLAS pick its kernel from the CPU itself
        e.pop("OPENBLAS_CORETYPE", None)
        e.pop("OPENBLAS_L2_SIZE", None)
    return e


def once(cmd, env=None):
    """Wall time, peak RSS (MB, from GNU time: of the command itself, not
    of this Python), stdout and stderr of one process."""
    rss_file = out("rss")
    t = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%U %S %M", "-o", rss_file] + cmd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    so, se = p.communicate()
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), se.decode(errors="replace")))
    ru = open(rss_file).read().split()
    return {"wall": wall, "rss": float(ru[-1]) / 1024.0, "cpu": float(ru[-3]) + float(ru[-2]),
            "out": so.decode(errors="replace"),
            "err": se.decode(errors="replace")}


def stats(res):
    return {"wall": median(r["wall"] for r in res) * 1e3, "rss": max(r["rss"] for r in res)}


def layer_flop(b, n, d):
    # multiply-adds × 2 of the four projections, QKᵀ and weights·V: attn's formula
    return 2.0 * (b * 4.0 * n * d * d + 2.0 * b * n * n * d)


def progress(msg):
    print("  " + msg, file=sys.stderr, flush=True)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


# ---- the machine --------------------------------------------------------
cpuinfo = read("/proc/cpuinfo")
m = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
cpu_model = m.group(1).strip() if m else os.uname().machine
flags = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
flags = flags.group(1).split() if flags else []
simd = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_bf16") if f in flags)
mem = re.search(r"^MemTotal:\s*(\d+)", read("/proc/meminfo"), re.M)
mem_gb = int(mem.group(1)) / 1024.0 ** 2 if mem else 0.0
load0 = os.getloadavg()
git = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                     capture_output=True, text=True).stdout.strip()
version = once([attn, "--version"])["out"].strip()
alt = ", ".join(os.path.realpath(p) for p in glob.glob("/etc/alternatives/libblas.so.3-*")) or "?"
fam = re.search(r"^cpu family\s*:\s*(\d+)", cpuinfo, re.M)
mod = re.search(r"^model\s*:\s*(\d+)", cpuinfo, re.M)
mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", cpuinfo, re.M)
print("machine: %s%s%s (%s), %d cores, %.1f GB; Linux %s%s"
      % (cpu_model, " family %s model %s" % (fam.group(1), mod.group(1)) if fam and mod else "",
         ", %.0f MHz" % float(mhz.group(1)) if mhz else "", simd, os.cpu_count(), mem_gb,
         os.uname().release, ", a virtual machine" if "hypervisor" in flags else ""))
print("%s (%s), medians of %d runs; load average at start %.2f" % (version, git, runs, load0[0]))


def check_blas(j, blas):
    """Refuse numbers from a process that did not load the BLAS it was meant to."""
    kind, libs = j["blas"]["kind"], j["blas"]["libs"]
    if (blas == "ob") != (kind == "OpenBLAS") or not libs:
        sys.exit("asked for %s, the process loaded %s: %s" % (blas, kind, libs))


# ---- training: attn train against the same model in PyTorch ---------------
# Each default task as a whole process (attn train --task T as a user runs
# it; PyTorch: bench_train_torch.py T, OpenBLAS, 2 threads, `import torch`
# included) and per step (the training loop's time ÷ its steps, batch
# drawing included; attn with --log-every above the steps, so that it
# evaluates the held-out set only at the first and last step). attn runs
# with its defaults (every core, as PyTorch's 2 threads). PyTorch is slow to
# start: it runs max(1, RUNS // 3) times per task.
bench_train = os.path.join(root, "scripts", "bench_train_torch.py")
train_rows = []
for task in () if layers_only else train_tasks:
    progress("attn train --task %s · bench_train_torch.py %s" % (task, task))
    acmd = [attn, "train", "--task", task, "--color", "never"]
    scmd = acmd + ["--log-every", "1000000"]
    pcmd = [py, bench_train, task]
    once(acmd)  # warm the page cache
    ra, rs, rp = [], [], []
    for i in range(runs):  # interleaved
        ra.append(once(acmd))
        rs.append(once(scmd))
        if i < max(1, runs // 3):
            rp.append(once(pcmd, env_for("ob")))
    steps_ms, acc = [], []
    for r in rs:
        m = re.search(r"(\d+) steps in ([\d.]+) s", r["out"])
        h = re.search(r"held-out accuracy ([\d.]+)%", r["out"])
        if not m or not h:
            sys.exit("attn train printed no time or accuracy:\n" + r["out"][:300])
        steps_ms.append(float(m.group(2)) / int(m.group(1)) * 1e3)
        acc.append(float(h.group(1)) / 100)
    jp = [json.loads(r["out"]) for r in rp]
    train_rows.append({"task": task, "steps": jp[0]["steps"],
                       "attn_wall": median(r["wall"] for r in ra),
                       "attn_cpu": median(r["cpu"] for r in ra),
                       "cpu_step": (median(r["cpu"] for r in rs) / jp[0]["steps"] * 1e3,
                                    median(j["loop_cpu_seconds"] for j in jp) / jp[0]["steps"]
                                    * 1e3),
                       "torch_wall": median(r["wall"] for r in rp),
                       "attn_step": median(steps_ms),
                       "torch_step": median(j["ms_per_step_mean"] for j in jp),
                       "acc": (min(acc), jp[-1]["last_batch_accuracy"]),
                       "n": (len(ra), len(rp))})


# ---- translation: attn train --task translate against the same model in PyTorch
# The default run (600 steps, batch 64, 2 blocks a side, d 32, 4 heads, FFN
# 64, num_steps 12, Adam 0.005, clipping 1) as a whole process, attn with
# --threads 2 and PyTorch (bench_translate_torch.py: gen_seq2seq_ref.py's
# modules in float32, batches of random pairs of the grammar's shapes and
# vocabularies, OpenBLAS) on 2 threads, `import torch` and its 20 warm-up
# steps included. Per step: attn's training loop ÷ steps with --log-every
# above the steps (the loop then evaluates the held-out set, greedy
# decoding of 200 sentences, at its first and last step only, as for the
# other tasks), and the same without those evaluations: the loops of 600
# and of 100 steps differenced, ÷ 500; PyTorch's timed steps after its
# warm-up (batch, forward, loss, backward, d2l's grad_clipping, Adam), on 2
# threads and on 1. PyTorch runs max(1, RUNS // 3) times on each.
translate_torch = os.path.join(root, "scripts", "bench_translate_torch.py")


def bench_translate_arch(arch):
    """One row: attn train --task translate --arch ARCH against the same
    model in PyTorch (bench_translate_torch.py --arch ARCH)."""
    progress("attn train --task translate --arch %s · bench_translate_torch.py (2 threads, "
             "1 thread)" % arch)
    acmd = [attn, "train", "--task", "translate", "--arch", arch, "--threads", str(THREADS),
            "--color", "never"]
    scmd = acmd + ["--log-every", "1000000"]
    short = scmd + ["--steps", "100"]
    tcmd = [py, translate_torch, "--arch", arch]
    once(acmd)  # warm the page cache
    ra, rs, rshort, rp2, rp1 = [], [], [], [], []
    for i in range(runs):  # interleaved
        ra.append(once(acmd))
        rs.append(once(scmd))
        rshort.append(once(short))
        if i < max(1, runs // 3):
            rp2.append(once(tcmd + ["--threads", str(THREADS)], env_for("ob")))
            rp1.append(once(tcmd + ["--threads", "1"], env_for("ob")))

    def loop_s(r):
        m = re.search(r"(\d+) steps in ([\d.]+) s", r["out"])
        if not m:
            sys.exit("attn train printed no time:\n" + r["out"][:300])
        return int(m.group(1)), float(m.group(2))

    steps = loop_s(rs[0])[0]
    short_steps = loop_s(rshort[0])[0]
    bleu = [re.search(r"held-out BLEU ([\d.]+)", r["out"]) for r in rs]
    if not all(bleu):
        sys.exit("attn train printed no BLEU:\n" + rs[0]["out"][:300])
    j2 = [json.loads(r["out"]) for r in rp2]
    j1 = [json.loads(r["out"]) for r in rp1]
    if j2[0]["steps"] != steps:
        sys.exit("PyTorch ran %d steps, attn %d" % (j2[0]["steps"], steps))
    diff = [(loop_s(a)[1] - loop_s(b)[1]) / (steps - short_steps) * 1e3
            for a, b in zip(rs, rshort)]
    return {
        "arch": arch, "steps": steps, "attn_wall": median(r["wall"] for r in ra),
        "attn_cpu": median(r["cpu"] for r in ra),
        "torch_wall": median(r["wall"] for r in rp2),
        "attn_step": median(loop_s(r)[1] / steps * 1e3 for r in rs),
        "attn_step_train": median(diff),
        "torch_step": median(j["ms_per_step_mean"] for j in j2),
        "torch_step_median": median(j["ms_per_step_median"] for j in j2),
        "torch_step1": median(j["ms_per_step_mean"] for j in j1),
        "cpu_step": (median(r["cpu"] for r in rs) / steps * 1e3,
                     median(j["loop_cpu_seconds"] for j in j2) / steps * 1e3),
        "bleu": min(float(b.group(1)) for b in bleu),
        "torch_loss": (j2[-1]["first_loss"], j2[-1]["last_loss"]),
        "n": (len(ra), len(rp2))}


translate_rows = []
if bench_translate:
    translate_rows = [bench_translate_arch(a) for a in ("transformer", "bahdanau")]


def print_translate():
    print()
    print("| attn train | steps | process s attn · PyTorch | ÷ | attn CPU s | ms per step attn · "
          "PyTorch | ÷ | PyTorch's median step ms | ÷ | CPU ms per step attn · PyTorch | ÷ | "
          "PyTorch 1 thread ms per step | ÷ | attn ms per step, evaluations excluded | "
          "held-out BLEU attn · PyTorch loss first → last | runs attn · PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in translate_rows:
        print_translate_row(r)
    print_translate_note()


def print_translate_row(r):
    c = r["cpu_step"]
    print("| translate, %s | %d | %.2f · %.2f | %.1f | %.2f | %.2f · %.1f | %.1f | %.1f | %.1f "
          "| %.2f · %.1f | %.0f | %.1f | %.1f | %.2f | %.3f · %.2f → %.2f | %d · %d |"
          % (r["arch"], r["steps"], r["attn_wall"], r["torch_wall"], r["torch_wall"] / r["attn_wall"],
             r["attn_cpu"], r["attn_step"], r["torch_step"], r["torch_step"] / r["attn_step"],
             r["torch_step_median"], r["torch_step_median"] / r["attn_step"],
             c[0], c[1], c[1] / c[0], r["torch_step1"], r["torch_step1"] / r["attn_step"],
             r["attn_step_train"], r["bleu"], r["torch_loss"][0], r["torch_loss"][1],
             r["n"][0], r["n"][1]))


def print_translate_note():
    r = translate_rows[0]
    print("translate, transformer: d2l's Transformer, 2 blocks a side, d 32, 4 heads, FFN 64; "
          "translate, bahdanau: d2l's Seq2Seq with Bahdanau attention, 1 GRU layer a side, d 32; "
          "both batch 64, "
          "num_steps 12, vocabularies 37 and 45, Adam 0.005, clipping 1. attn --threads %d; "
          "PyTorch (gen_seq2seq_ref.py's and gen_bahdanau_ref.py's modules in float32, "
          "OpenBLAS) on %d threads, and on 1 "
          "beside, its process including `import torch` and 20 warm-up steps. ÷ = PyTorch's "
          "time ÷ attn's. PyTorch per step: its timed loop ÷ steps (the mean), and its median "
          "step (a busy machine delays some steps of 2 threads by far more than others). attn "
          "process: the default run as a user runs it, held-out BLEU every 20 steps. attn per step: its training loop ÷ steps, held-out evaluation (greedy "
          "decoding of 200 sentences) at the first and last step included; evaluations "
          "excluded: the loops of %d and 100 steps differenced. PyTorch trains on random pairs "
          "of the grammar's shapes (its loss falls as it memorises them)."
          % (THREADS, THREADS, r["steps"]))
    print("load average now %.2f (a busy machine slows every column)" % os.getloadavg()[0])


# ---- the Vision Transformer: attn train --task vit against d2l's ViT ------
# The default model (28 × 28 images, patches of 7, d 64, MLP 128, 4 heads,
# 2 blocks, dropout 0.1, batches of 128) on Fashion-MNIST, Adam at 0.001
# (attn's default) and SGD at 0.1 (d2l's). attn: an epoch of the first
# 100 batches (12,800 images; 100 test images evaluated after it), its
# printed epoch seconds ÷ 100; PyTorch: bench_vit_torch.py's timed steps
# after 3 warm-up steps (the same sizes, d2l's modules, OpenBLAS), both
# on 2 threads. PyTorch runs max(1, RUNS // 3) times.
vit_torch = os.path.join(root, "scripts", "bench_vit_torch.py")
VIT_STEPS = 100


def bench_vit_row(sgd):
    progress("attn train --task vit · bench_vit_torch.py (%s, 2 threads)"
             % ("SGD" if sgd else "Adam"))
    acmd = [attn, "train", "--task", "vit", "--train-size", str(128 * VIT_STEPS),
            "--test-size", "100", "--epochs", "1", "--threads", str(THREADS)]
    if sgd:
        acmd += ["--optimizer", "sgd", "--lr", "0.1"]
    tcmd = [py, vit_torch, "--steps", str(VIT_STEPS), "--threads", str(THREADS)]
    tcmd += ["--sgd"] if sgd else []
    once(acmd)  # warm the page cache
    ra, rp = [], []
    for i in range(runs):
        ra.append(once(acmd))
        if i < max(1, runs // 3):
            rp.append(once(tcmd, env_for("ob")))

    def epoch_s(r):
        m = re.search(r"^1 .*\(([\d.]+) s\)$", r["out"], re.M)
        if not m:
            sys.exit("attn train --task vit printed no epoch time:\n" + r["out"][:400])
        return float(m.group(1))

    j = [json.loads(r["out"]) for r in rp]
    return {"opt": "SGD 0.1" if sgd else "Adam 0.001",
            "attn_step": median(epoch_s(r) for r in ra) / VIT_STEPS * 1e3,
            "torch_step": median(x["ms_per_step_mean"] for x in j),
            "torch_step_median": median(x["ms_per_step_median"] for x in j),
            "n": (len(ra), len(rp))}


vit_rows = [bench_vit_row(False), bench_vit_row(True)] if bench_vit else []


def print_vit():
    print()
    print("| attn train --task vit | ms per step attn · PyTorch | ÷ | PyTorch's median step ms "
          "| ÷ | an epoch of 60,000 at attn's step s | runs attn · PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in vit_rows:
        print("| %s | %.1f · %.0f | %.0f | %.0f | %.0f | %.1f | %d · %d |"
              % (r["opt"], r["attn_step"], r["torch_step"], r["torch_step"] / r["attn_step"],
                 r["torch_step_median"], r["torch_step_median"] / r["attn_step"],
                 r["attn_step"] * 60000 / 128 / 1e3, r["n"][0], r["n"][1]))
    print("d2l.ai 11.8's ViT at attn's default sizes (28 × 28, patches of 7, d 64, MLP 128, "
          "4 heads, 2 blocks, dropout 0.1), batches of 128 of Fashion-MNIST, on %d threads "
          "each. attn: its epoch of %d batches ÷ %d (the fast path, nn/vision/vit_fast.c); "
          "PyTorch: bench_vit_torch.py's timed steps (d2l's modules, OpenBLAS). ÷ = PyTorch's "
          "time ÷ attn's." % (THREADS, VIT_STEPS, VIT_STEPS))
    print("load average now %.2f (a busy machine slows every column)" % os.getloadavg()[0])


def print_train():
    if not train_rows:
        return
    print()
    print("| attn train | steps | process s attn · PyTorch | ÷ | attn CPU s | ms per step "
          "attn · PyTorch | ÷ | CPU ms per step attn · PyTorch | ÷ | accuracy attn held-out · "
          "PyTorch last batch | runs attn · PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in train_rows:
        c = r["cpu_step"]
        print("| %s | %d | %.2f · %.2f | %.1f | %.2f | %.2f · %.1f | %.0f | %.2f · %.1f | %.0f "
              "| %.3f · %.3f | %d · %d |"
              % (r["task"], r["steps"], r["attn_wall"], r["torch_wall"],
                 r["torch_wall"] / r["attn_wall"], r["attn_cpu"], r["attn_step"], r["torch_step"],
                 r["torch_step"] / r["attn_step"], c[0], c[1], c[1] / c[0], r["acc"][0],
                 r["acc"][1], r["n"][0], r["n"][1]))
    print("÷ = PyTorch's time ÷ attn's (above 1: attn is faster). Process: median wall time of "
          "the whole process (PyTorch with OpenBLAS, %d threads, `import torch` included); "
          "attn CPU s: its user + system time (what a busy machine does not inflate). "
          "Per step: the training loop's time ÷ steps, batch drawing included, median over "
          "runs. CPU per step: attn's whole process CPU time ÷ steps (start-up and evaluation "
          "included), PyTorch's training loop's CPU time over its threads ÷ steps. The same model (scripts/gen_train_ref.py's), shapes, steps and optimizer; "
          "each side draws its own batches." % THREADS)
    print("load average now %.2f (a busy machine slows every column)" % os.getloadavg()[0])


if train_only:
    print_train()
    if translate_rows:
        print_translate()
    if vit_rows:
        print_vit()
    sys.exit(0)

# ---- the sgemm peak -------------------------------------------------------
sgemm_runs = []  # the JSON of every sgemm process: the peak is the best of all


def sgemm_peak():
    """OpenBLAS sgemm 2048² once more (numpy float32 matmul, 2 threads);
    returns the best GFLOP/s seen so far in this run."""
    j = json.loads(once([py, bench_torch, "sgemm", "--size", "2048", "--runs",
                         str(max(runs, 5))], env_for("ob"))["out"])
    check_blas(j, "ob")
    sgemm_runs.append(j)
    return max(x["best_gflops"] for x in sgemm_runs)


progress("sgemm peak: numpy float32 2048² @ 2048², OpenBLAS, 2 threads")
sgemm_peak()

# ---- process rows ---------------------------------------------------------
rows = []  # dicts: name, what, attn, ref, ob (ms), gflops (a, r, o), rss (a, r, o)


def process_row(name, attn_cmd, py_cmd, n=runs):
    progress(name)
    once(attn_cmd)  # warm the page cache
    once(py_cmd, env_for("ref"))
    once(py_cmd, env_for("ob"))
    ra, rr, ro = [], [], []
    for _ in range(n):  # interleaved: a drifting load hits all three alike
        ra.append(once(attn_cmd))
        rr.append(once(py_cmd, env_for("ref")))
        ro.append(once(py_cmd, env_for("ob")))
    a, r, o = stats(ra), stats(rr), stats(ro)
    rows.append({"name": name, "what": "process wall", "attn": a["wall"], "ref": r["wall"],
                 "ob": o["wall"], "gflops": None, "rss": (a["rss"], r["rss"], o["rss"])})


figures = []
if not layers_only:
    process_row("start-up: attn --version · import torch",
                [attn, "--version"], [py, bench_torch, "import"])
    process_row("the chapter's multihead cell",
                [attn, "multihead", "--color", "never"], [py, bench_torch, "cell"])
for steps, dim in ((60, 32), (10000, 512)) if not layers_only else ():
    acmd = [attn, "posenc", "--dim", str(dim), "--steps", str(steps), "--png", out("a.png")]
    first = once(acmd)
    size = re.search(r"(\d+)×(\d+) px", first["out"] + first["err"])
    if not size:
        sys.exit("attn posenc --png did not print the figure's size")
    pcmd = [py, bench_mpl, "--dim", str(dim), "--steps", str(steps), "--png", out("m.png"),
            "--size", "%sx%s" % size.groups()]
    process_row("posenc %d×%d → PNG" % (steps, dim), acmd, pcmd)
    figures.append("%d×%d: %s×%s px" % (steps, dim, size.group(1), size.group(2)))

# ---- layer rows -------------------------------------------------------------
torch_runs = {}  # the PyTorch JSON per BLAS, for the notes
ort_runs = []    # the ONNX Runtime JSON, for the notes
layers = []      # dicts: name, size, flop, attn, ort, ref, ob (ms), rss, runs


def attn_cmd(b, n, d, heads, stream, extra):
    return [attn, "selfattn", "--batch", str(b), "--queries", str(n), "--hiddens", str(d),
            "--heads", str(heads), "--fill", "random", "--valid-lens", "none",
            "--threads", str(THREADS), "--color", "never"] + \
        (["--stream"] if stream else []) + extra


def attn_layer(b, n, d, heads, stream):
    """One attn process: the median forward time of its runs after a warm-up."""
    r = once(attn_cmd(b, n, d, heads, stream, ["--time", "--repeat", str(runs + 1)]))
    m = re.search(r"forward pass: ([\d.]+) ms, ([\d.e+]+) GFLOP", r["err"])
    if not m:
        sys.exit("no forward time from attn --time:\n" + r["err"])
    gflop = float(m.group(2))
    if abs(gflop * 1e9 - layer_flop(b, n, d)) > 0.01 * layer_flop(b, n, d):
        sys.exit("attn counts %g GFLOP, the bench %g" % (gflop, layer_flop(b, n, d) * 1e-9))
    return float(m.group(1)), r


def ort_layer(attn_json, r):
    """One ONNX Runtime process on attn's weights and input: its median of
    r runs after a warm-up; refuses a result that is not attn's output."""
    res = once([py, bench_ort, attn_json, tmp, ort_modules, str(r)])
    j = json.loads(res["out"])
    if j["max_rel_diff"] > 1e-4:
        sys.exit("ONNX Runtime's output differs from attn's by %g (%s)"
                 % (j["max_rel_diff"], attn_json))
    ort_runs.append(j)
    return j["median_ms"], res


def torch_layer(b, n, d, heads, blas):
    r = once([py, bench_torch, "layer", "--batch", str(b), "--n", str(n), "--d", str(d),
              "--heads", str(heads), "--runs", str(runs), "--warmup", "1", "--budget", "20"],
             env_for(blas))
    j = json.loads(r["out"])
    if abs(j["flop"] - layer_flop(b, n, d)) > 1e-6 * j["flop"]:
        sys.exit("bench_torch.py counts a different FLOP")
    check_blas(j, blas)
    torch_runs.setdefault(blas, j)
    return j, r


# first the check on a small case with a mask-free odd size: 2 × 37, d 48, 4 heads
progress("ONNX Runtime against attn: 2 × 37, d 48, 4 heads")
once(attn_cmd(2, 37, 48, 4, False, ["--json", out("small.json")]))
ort_layer(out("small.json"), 1)
small_check = ort_runs.pop()

ROUNDS = 3  # attn and ONNX Runtime processes, alternating
for label, b, n, d, heads, both in (("BERT-base layer", 1, 512, 768, 12, True),
                                    ("long sequence", 1, 4096, 512, 8, False)):
    progress(label)
    flop = layer_flop(b, n, d)
    # attn's weights and input (the same --seed as its timed runs), for ONNX Runtime
    attn_json = out("layer.json")
    once(attn_cmd(b, n, d, heads, True, ["--json", attn_json]))
    peak_now = sgemm_peak()
    modes = (True, False) if both else (True,)
    t_attn = {s: [] for s in modes}
    rss_attn = {s: [] for s in modes}
    t_ort, rss_ort = [], []
    for _ in range(ROUNDS):
        for stream in modes:
            ms, r = attn_layer(b, n, d, heads, stream)
            t_attn[stream].append(ms)
            rss_attn[stream].append(r["rss"])
        ms, r = ort_layer(attn_json, runs)
        t_ort.append(ms)
        rss_ort.append(r["rss"])
    ort_check = ort_runs[-1]
    os.remove(attn_json)
    jr, rr = torch_layer(b, n, d, heads, "ref")
    jo, ro = torch_layer(b, n, d, heads, "ob")
    for stream in modes:
        layers.append({"name": "%s, %s" % (label, "--stream" if stream else "weights stored"),
                       "size": "batch %d, n %d, d %d, %d heads" % (b, n, d, heads),
                       "flop": flop, "attn": median(t_attn[stream]), "ort": median(t_ort),
                       "ref": jr["median_ms"], "ob": jo["median_ms"],
                       "rounds": (t_attn[stream], t_ort), "diff": ort_check["max_rel_diff"],
                       "rss": (max(rss_attn[stream]), max(rss_ort), ro["rss"]),
                       "runs": (runs, runs, jr["runs"], jo["runs"])})

# ---- attn only (no Python counterpart) --------------------------------------
only = []
for name, args, n in () if layers_only else (
        ("posenc 10000×512 --json", ["posenc", "--dim", "512", "--steps", "10000",
                                     "--json", out("b.json")], runs),
        ("multihead, the chapter's cell --png", ["multihead", "--png", out("c.png")], runs),
        # the weights (8 × 2048 × 2048 floats, 128 MiB) are the only n² storage
        ("selfattn 1×2048, d 512, 8 heads (weights stored)",
         ["selfattn", "--batch", "1", "--queries", "2048", "--hiddens", "512", "--heads", "8",
          "--fill", "random", "--valid-lens", "none", "--color", "never"], runs),
        # streaming: the 65536² weights would take 16 GiB; one run (about 10 s)
        ("selfattn 1×65536, d 64, 1 head, --stream",
         ["selfattn", "--batch", "1", "--queries", "65536", "--hiddens", "64", "--heads", "1",
          "--fill", "random", "--valid-lens", "none", "--stream", "--color", "never"], 1)):
    progress(name)
    if n > 1:
        once([attn] + args)  # warm the page cache
    only.append((name, stats([once([attn] + args) for _ in range(n)])))

load1 = os.getloadavg()

# ---- the tables ---------------------------------------------------------------
peak = max(x["best_gflops"] for x in sgemm_runs)


def f_ms(v):
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 1 else "%.2f" % v


def f_ratio(v):
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v


def markdown(head, table):
    widths = [max(len(x[i]) for x in table + [head]) for i in range(len(head))]
    line = lambda cells: "| " + " | ".join(c.ljust(w) if i < 1 else c.rjust(w)
                                           for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    print(line(head))
    print("|" + "|".join("-" * (w + 1) + (":" if i >= 1 else "-")
                         for i, w in enumerate(widths)) + "|")
    for t in table:
        print(line(t))
    print()


print()
print("Forward pass (ratios: the other's time ÷ attn's; above 1, attn is faster):")
print()
gf = lambda r, ms: r["flop"] / ms * 1e-6
markdown(["case", "attn ms", "ONNX Runtime ms", "PyTorch OpenBLAS ms", "PyTorch ref BLAS ms",
          "ORT ÷ attn", "PyTorch OB ÷ attn", "GFLOP/s attn · ORT", "% of sgemm peak attn · ORT",
          "peak RSS MB attn · ORT · PyTorch"],
         [[r["name"], f_ms(r["attn"]), f_ms(r["ort"]), f_ms(r["ob"]), f_ms(r["ref"]),
           f_ratio(r["ort"] / r["attn"]), f_ratio(r["ob"] / r["attn"]),
           "%.0f · %.0f" % (gf(r, r["attn"]), gf(r, r["ort"])),
           "%.0f%% · %.0f%%" % (100 * gf(r, r["attn"]) / peak, 100 * gf(r, r["ort"]) / peak),
           "%.0f · %.0f · %.0f" % r["rss"]] for r in layers])
if rows:
    print("Processes (median wall time, interleaved):")
    print()
    markdown(["case", "attn ms", "Python, ref BLAS ms", "Python, OpenBLAS ms", "ref ÷ attn",
              "OpenBLAS ÷ attn", "peak RSS MB attn · ref · OpenBLAS"],
             [[r["name"], f_ms(r["attn"]), f_ms(r["ref"]), f_ms(r["ob"]),
               f_ratio(r["ref"] / r["attn"]), f_ratio(r["ob"] / r["attn"]),
               "%.0f · %.0f · %.0f" % r["rss"]] for r in rows])
if only:
    markdown(["attn only", "process wall ms", "peak RSS MB"],
             [[name, f_ms(st["wall"]), "%.1f" % st["rss"]] for name, st in only])


def blas_desc(j):
    bl = j["blas"]
    if bl["kind"] == "OpenBLAS":
        return "%s, kernel %s, %d threads (%s)" % (bl["config"].split(" DYNAMIC")[0], bl["corename"],
                                                   bl["threads"], ", ".join(bl["libs"]))
    return "%s (%s)" % (bl["kind"], ", ".join(bl["libs"]))


sg = sgemm_runs[0]
print("sgemm peak: %.1f GFLOP/s, the best of %d processes × %d runs (their medians %s), numpy "
      "%s float32 2048² @ 2048² with %s"
      % (peak, len(sgemm_runs), sg["runs"],
         " · ".join("%.0f" % x["median_gflops"] for x in sgemm_runs), sg["numpy"],
         blas_desc(sg)))
o = ort_runs[-1]
print("ONNX Runtime %s (onnxruntime-node), %s; MatMul ×3 → com.microsoft.MultiHeadAttention → "
      "MatMul on attn's weights and input; largest difference from attn's output, relative "
      "to its largest value: %.1e on 2 × 37, d 48, 4 heads; %s"
      % (o["ort"], ", ".join("%s %s" % (k, v) for k, v in o["options"].items()),
         small_check["max_rel_diff"], "; ".join("%.1e on %s" % (r["diff"], r["name"].split(",")[0])
                                                  for r in layers if "stored" not in r["name"])))
print("PyTorch %s, %d threads, torch.no_grad(), the chapter's MultiHeadAttention (d2l's "
      "formulas: Linear, transpose_qkv, bmm, masked_softmax, bmm, W_o)" %
      (torch_runs["ob"]["torch"], torch_runs["ob"]["torch_threads"]))
print("  ref BLAS:  " + blas_desc(torch_runs["ref"]))
print("  OpenBLAS:  " + blas_desc(torch_runs["ob"]))
print("  system libblas.so.3 (what a plain python3 loads now): " + alt)
if figures:
    print("Python: numpy + matplotlib (bench_posenc_mpl.py: the chapter's heatmap, imshow + "
          "colour bar, Agg, at attn's pixel size: %s) for posenc." % ", ".join(figures))
print("Forward rows: in-process, %d alternating rounds of one attn process (--time --repeat %d: "
      "the median after a warm-up, --threads %d) and one ONNX Runtime process (the median of "
      "%d runs after a warm-up); the median of the rounds. PyTorch: one process per BLAS, after "
      "1 warm-up, at least 2 runs, at most %d or 20 s. FLOP = 2 × multiply-adds of the four "
      "projections, QKᵀ and weights·V. attn --stream: online softmax, the weights never "
      "stored; ONNX Runtime's fused attention does not return them; PyTorch stores them (d2l "
      "keeps attention_weights). Peak RSS: the whole process (PyTorch's includes `import "
      "torch`; ONNX Runtime's, node itself)." % (ROUNDS, runs + 1, THREADS, runs, runs))
for r in layers:
    print("  %s (%s): rounds attn %s · ORT %s ms"
          % (r["name"], r["size"], " ".join(f_ms(v) for v in r["rounds"][0]),
             " ".join(f_ms(v) for v in r["rounds"][1])))
print("load average at the end %.2f (a busy machine slows every column)" % load1[0])
if train_rows:
    print_train()
if translate_rows:
    print_translate()
if vit_rows:
    print_vit()
