"""Issue 5's catalogue of bad input, each case with its exit code and
exact message: bad options and absurd sizes for every command
(bad_options); bad JSON, outputs that cannot be written, closed pipes and
untouched inputs (bad_inputs)."""
import json
import math
import os
import random
import signal
import subprocess
import tempfile

from . import common
from .common import VALGRIND, check, expect, run, sha


def group_bad_options(tmp):
    """Issue 5's catalogue, part 1: every command against bad options
    (non-numeric, negative, out of range, empty, repeated, unknown, missing
    their value, --max-mem garbage) and absurd sizes, each case with its
    exit code and exact message. Part 2 is group_bad_inputs."""
    T = 10 ** 12  # the largest size an option takes; larger products meet --max-mem
    RANGE = {"posenc": [("--dim", 1, 10 ** 9), ("--steps", 1, T)],
             "multihead": [("--batch", 1, T), ("--queries", 1, T), ("--kv", 1, T),
                           ("--hiddens", 1, T), ("--heads", 1, T)],
             "selfattn": [("--batch", 1, T), ("--queries", 1, T), ("--hiddens", 1, T),
                          ("--heads", 1, T)],
             "complexity": [("--n", 1, 1000000), ("--d", 1, 65536), ("--k", 2, 1000),
                            ("--measure-dim", 1, 4096)]}
    MEM = ("--max-mem: expected a positive size in bytes with an optional suffix K, M, G "
           "or T, got '%s'")
    # ---- options, for every command
    for cmd, opts in RANGE.items():
        P = "attn %s: " % cmd
        for opt, lo, hi in opts:
            want = P + "%s: expected an integer from %d to %d, got '%%s'" % (opt, lo, hi)
            # non-numeric, negative, out of range, empty, fractional, hex, overflowing
            # (under valgrind two of them: each runs the same parser)
            for bad in (["abc", str(hi + 1)] if VALGRIND else
                        ["abc", "-3", str(hi + 1), "", "2.5", "0x10", "1e3",
                         "99999999999999999999"]):
                expect([cmd, opt, bad], 2, err=want % bad)
            if (cmd, opt) != ("complexity", "--k"):  # --k 1 has its own message
                expect([cmd, "%s=%s" % (opt, lo - 1)], 2, err=want % (lo - 1))
            expect([cmd, opt], 2, err=P + "option '%s' needs a value" % opt)
            expect([cmd, opt, str(lo), opt + "=" + str(lo)], 2,
                   err=P + "option '%s' given twice" % opt)
        for bad in (["lots", "18446744073709551616"] if VALGRIND else
                    ["lots", "0", "-5", "1.5G", "1e9", "", "4Q", "99999999999T",
                     "18446744073709551616"]):
            expect([cmd, "--max-mem", bad], 2, err=P + MEM % bad)
        expect([cmd, "--max-mem"], 2, err=P + "option '--max-mem' needs a value")
        expect([cmd, "--max-mem", "1G", "--max-mem", "2G"], 2,
               err=P + "option '--max-mem' given twice")
        for bad in ["--frob", "--frob=1", "-Z", "---x"]:
            expect([cmd, bad], 2, err=P + "unknown option '%s' (see attn %s --help)"
                   % (bad, cmd))
        expect([cmd, "stray"], 2, err=P + "unexpected argument 'stray' (see attn %s --help)"
               % cmd)
        expect([cmd, "--json"], 2, err=P + "option '--json' needs a value")
        if cmd != "complexity":
            expect([cmd, "--color", "purple"], 2,
                   err=P + "--color: expected auto, always or never, got 'purple'")
    # the memory limit, refused up front with the estimate (exit 1)
    expect(["posenc", "--max-mem", "1K"], 1,
           err="attn posenc: --steps 60 --dim 32 needs about 32 MiB, more than --max-mem 1 KiB")
    expect(["multihead", "--max-mem", "1K"], 1,
           err="attn multihead: the inputs and weights need about 169 KiB, more than "
               "--max-mem 1 KiB")
    expect(["selfattn", "--max-mem", "1K"], 1,
           err="attn selfattn: the inputs and weights need about 159 KiB, more than "
               "--max-mem 1 KiB")
    expect(["complexity", "--max-mem", "100"], 1,
           err="attn complexity: --n 100 needs about 300 B, more than --max-mem 100 B")

    # ---- absurd sizes: dimensions of 10^9, and products that overflow 64 bits,
    # are refused up front by --max-mem with the estimate (exit 1), never
    # allocated; complexity's counts keep their own range (exit 2)
    M, S = "attn multihead: ", "attn selfattn: "
    expect(["multihead", "--queries", "1000000000"], 1,
           err=M + "the inputs and weights need about 745 GiB, more than --max-mem 4 GiB")
    expect(["selfattn", "--hiddens", "1000000000"], 1,
           err=S + "the inputs and weights need about 13.9 EiB, more than --max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000"], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000", "--png", os.path.join(tmp, "huge.png")], 1,
           err="attn posenc: --steps 1000000000 --dim 32 needs about 119 GiB, more than "
               "--max-mem 4 GiB")
    expect(["posenc", "--steps", "1000000000000", "--dim", "1000000000"], 1,
           err="attn posenc: --steps 1000000000000 --dim 1000000000 needs more memory than "
               "this machine can address, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "1000000000000", "--queries", "1000000000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["complexity", "--n", "1000000000"], 2,
           err="attn complexity: --n: expected an integer from 1 to 1000000, got '1000000000'")
    big = ["--batch", "100000000", "--queries", "100000000", "--hiddens", "100000000",
           "--heads", "1"]
    expect(["multihead"] + big + ["--kv", "100000000"], 1,
           err=M + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big, 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn"] + big + ["--stream"], 1,
           err=S + "the inputs and weights need more than this machine can address, more "
                   "than --max-mem 4 GiB")
    expect(["selfattn", "--queries", "100000000", "--hiddens", "8", "--heads", "8"], 1,
           err=S + "the inputs and weights need about 5.96 GiB, more than --max-mem 4 GiB")
    expect(["multihead", "--batch", "100", "--queries", "100000", "--kv", "100000",
            "--hiddens", "8", "--heads", "8"], 1,
           err=M + "batch 100 × 8 heads × 100000 queries × 100000 keys needs about 29.1 TiB, "
                   "more than --max-mem 4 GiB; --stream computes without storing the "
                   "attention weights")
    expect(["posenc", "--steps", "100000000", "--dim", "1000000", "--similarity",
            os.path.join(tmp, "s.png")], 1,
           err="attn posenc: --steps 100000000 --dim 1000000 with --similarity needs about "
               "35.9 PiB, more than --max-mem 4 GiB")

    if VALGRIND:
        print("under valgrind: 2 bad values per option and for --max-mem, not all")


def group_bad_inputs(tmp):
    """Issue 5's catalogue, part 2: bad JSON for multihead and selfattn
    (from files and stdin), outputs that cannot be written, closed pipes.
    Input files are never written (checksums before and after), and a
    failed run leaves no file behind and an existing file untouched."""
    M = "attn multihead: "
    # ---- bad JSON, for multihead and selfattn
    inputs = {}  # every input file and its checksum when written

    def jfile(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        inputs[path] = sha(path)
        return path

    deep = "[" * 100000 + "]" * 100000
    deep_obj = '{"a":' * 100000 + "1" + "}" * 100000
    for_both = [  # (file name, text, {cmd: (exit code, message)}); None: same for both
        ("binary.json", bytes(range(256)), 1,
         "line 1, column 1: a NUL byte: not a JSON text"),
        ("binary1.json", bytes(range(1, 256)), 1,
         "line 2, column 23: invalid JSON at '!'"),
        ("high.json", bytes(range(0x80, 0x100)), 1,
         "line 1, column 1: invalid JSON at byte 0x80"),
        ("deep.json", deep, 1,
         "line 1, column 1001: arrays and objects nested deeper than 1000 levels"),
        ("deep_obj.json", deep_obj, 1,
         "line 1, column 5001: arrays and objects nested deeper than 1000 levels"),
        ("empty.json", "", 1, "empty: expected a JSON object"),
        ("blank.json", " \n\t\n", 1, "empty: expected a JSON object"),
        ("truncated.json", '{"%s": [[[1,', 1, "line 1, column {END}: the JSON ends too early"),
        ("trailing.json", '{"%s": [[[1]]]}}', 1,
         "line 1, column {LAST}: unexpected text after the JSON value"),
        ("trailing2.json", '{"%s": [[[1]]]} {}', 1,
         "line 1, column {LAST2}: unexpected text after the JSON value"),
        ("inf.json", '{"%s": [[[1, Infinity]]]}', 1,
         "line 1, column {Inf}: Infinity is not a JSON number (NaN and Infinity are not allowed)"),
        ("ninf.json", '{"%s": [[[-Infinity]]]}', 1,
         "line 1, column {-Inf}: -Infinity is not a JSON number (NaN and Infinity are not "
         "allowed)"),
        ("nan.json", '{"%s": [[[NaN, 1]]]}', 1,
         "line 1, column {NaN}: NaN is not a JSON number (NaN and Infinity are not allowed)"),
        ("1e400.json", '{"%s": [[[1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got inf"),
        ("m1e400.json", '{"%s": [[[-1e400]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got -inf"),
        ("4e38.json", '{"%s": [[[4e38]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a finite float32 number, got 4e+38"),
        ("string.json", '{"%s": [[["1"]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a string"),
        ("bool.json", '{"%s": [[[false, 1]]], "num_heads": 1}', 1,
         "$.%s[0][0][0]: expected a number, got a boolean"),
        ("null.json", '{"%s": [[[1, null]]], "num_heads": 1}', 1,
         "$.%s[0][0][1]: expected a number, got null"),
        ("obj.json", '{"%s": [[{"a": 1}]], "num_heads": 1}', 1,
         "$.%s[0][0]: expected a number, got an object"),
        ("toplevel_null.json", '{"%s": null}', 1,
         "$.%s: expected an array of numbers, got null"),
        ("toplevel_num.json", '{"%s": 3}', 1, "$.%s: expected an array of numbers, got a number"),
        ("ragged.json", '{"%s": [[[1, 2], [3]]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected 2 numbers, got 1"),
        ("ragged2.json", '{"%s": [[[1]], [[1], [2]]], "num_heads": 1}', 1,
         "$.%s[1]: expected 1 arrays, got 2"),
        ("mixed.json", '{"%s": [[[1], 2]], "num_heads": 1}', 1,
         "$.%s[0][1]: expected an array of 1 numbers, got a number"),
        ("empty1.json", '{"%s": [], "num_heads": 1}', 1, "$.%s: an empty array"),
        ("empty2.json", '{"%s": [[]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("empty3.json", '{"%s": [[[]]], "num_heads": 1}', 1, "$.%s: an empty array inside"),
        ("dup.json", '{"%s": [[[1]]], "num_heads": 1, "num_heads": 1}', 1,
         "$.num_heads: the key appears twice"),
        ("heads_bool.json", '{"%s": [[[1]]], "num_heads": true}', 1,
         "$.num_heads: expected an integer, got a boolean"),
        ("heads_null.json", '{"%s": [[[1]]], "num_heads": null}', 1,
         "$.num_heads: expected an integer, got null"),
        ("heads_str.json", '{"%s": [[[1]]], "num_heads": "1"}', 1,
         "$.num_heads: expected an integer, got a string"),
        ("heads_frac.json", '{"%s": [[[1]]], "num_heads": 0.5}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got 0.5"),
        ("heads_neg.json", '{"%s": [[[1]]], "num_heads": -1}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got -1"),
        ("heads_big.json", '{"%s": [[[1]]], "num_heads": 1e400}', 1,
         "$.num_heads: expected an integer from 1 to 1000000, got inf"),
        ("heads_div.json", '{"%s": [[[1, 2, 3]]], "num_heads": 2}', 2,
         "num_hiddens 3 (the width of $.%s) is not divisible by num_heads 2 ($.num_heads)"),
        ("vl_empty.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": []}', 1,
         "$.valid_lens: expected a non-empty array of integers, got an empty array"),
        ("vl_empty2.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [[]]}', 1,
         "$.valid_lens[0]: an empty array"),
        ("vl_bool.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": true}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a boolean"),
        ("vl_num.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": 1}', 1,
         "$.valid_lens: expected a non-empty array of integers, got a number"),
        ("vl_null_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [null]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got null"),
        ("vl_true_item.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [true]}', 1,
         "$.valid_lens[0]: expected an integer >= 0, got a boolean"),
        ("vl_huge.json", '{"%s": [[[1]]], "num_heads": 1, "valid_lens": [1e400]}', 1,
         "$.valid_lens[0]: expected an integer from 0 to 1000000000, got inf"),
        ("vl_long.json", '{"%s": [[[1]], [[2]]], "num_heads": 1, "valid_lens": [1, 1, 1]}', 1,
         "$.valid_lens: expected 2 lengths (one per example) or a (2, 1) array, got 3"),
        ("vl_short2d.json", '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1]]}', 1,
         "$.valid_lens: expected shape (1,) or (1, 2), got (1, 1)"),
        ("vl_ragged.json",
         '{"%s": [[[1], [2]]], "num_heads": 1, "valid_lens": [[1, 2], [1]]}', 1,
         "$.valid_lens[1]: expected 2 integers, got 1"),
        ("sd_null.json", '{"%s": [[[1]]], "num_heads": 1, "state_dict": null}', 1,
         "$.state_dict: expected an object, got null"),
        ("sd_empty_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [], "W_k.weight": [[1]],'
         ' "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"]: an empty array'),
        ("sd_null_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[null]], '
         '"W_k.weight": [[1]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_q.weight"][0][0]: expected a number, got null'),
        ("sd_inf_w.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_k.weight": [[1e39]], "W_v.weight": [[1]], "W_o.weight": [[1]]}}', 1,
         '$.state_dict["W_k.weight"][0][0]: expected a finite float32 number, got 1e+39'),
        ("sd_dup.json",
         '{"%s": [[[1]]], "num_heads": 1, "state_dict": {"W_q.weight": [[1]], '
         '"W_q.weight": [[1]]}}', 1, '$.state_dict["W_q.weight"]: the key appears twice'),
    ]
    for cmd, key in [("multihead", "queries"), ("selfattn", "X")]:
        P = "attn %s: " % cmd
        for name, text, code, msg in for_both:
            if isinstance(text, str) and "%s" in text:
                text = text % key
            if "%s" in msg:
                msg = msg % key
            if "{" in msg:  # {MARK}: the column of MARK in the text, {END}: past its end
                mark = msg[msg.index("{") + 1:msg.index("}", msg.index("{") + 2)]
                col = {"END": len(text) + 1, "LAST": len(text), "LAST2": len(text) - 1}.get(
                    mark) or text.index(mark) + 1
                msg = msg.replace("{%s}" % mark, str(col), 1)
            path = jfile(cmd + "_" + name, text)
            expect([cmd, "--input", path], code, err=P + "%s: %s" % (path, msg))
        # the same through stdin
        expect([cmd, "--input", "-"], 1, stdin=b'{"%s": [[[1,' % key.encode(),
               err=P + "-: line 1, column %d: the JSON ends too early" % (11 + len(key)))
        expect([cmd, "--input", "-"], 1, stdin=bytes(range(256)),
               err=P + "-: line 1, column 1: a NUL byte: not a JSON text")
        expect([cmd, "--input", "-"], 1, stdin=b"", err=P + "-: empty: expected a JSON object")
        expect([cmd, "--input", "-"], 1, stdin=deep.encode(),
               err=P + "-: line 1, column 1001: arrays and objects nested deeper than 1000 "
                       "levels")
        # not a file: missing, a directory; a file over the input limit of --max-mem
        missing = os.path.join(tmp, "no", "such.json")
        expect([cmd, "--input", missing], 1,
               err=P + "%s: cannot open: No such file or directory" % missing)
        expect([cmd, "--input", tmp], 1, err=P + "%s: cannot read: Is a directory" % tmp)
        path = jfile(cmd + "_big.json", '{"%s": [[[%s1]]], "num_heads": 1}' % (key, "0" * 200))
        expect([cmd, "--input", path, "--max-mem", "1K"], 1,
               err=P + "%s: larger than 128 B, the input limit for --max-mem" % path)
    # cross attention's own shapes
    M = "attn multihead: "
    for name, text, msg in [
        ("keys_empty.json", '{"queries": [[[1]]], "keys": [], "num_heads": 1}',
         "$.keys: an empty array"),
        ("values_empty.json", '{"queries": [[[1]]], "keys": [[[1]]], "values": [[[]]], '
         '"num_heads": 1}', "$.values: an empty array inside"),
        ("keys_bool.json", '{"queries": [[[1]]], "keys": [[[true]]], "num_heads": 1}',
         "$.keys[0][0][0]: expected a number, got a boolean"),
        ("keys_batch.json", '{"queries": [[[1]]], "keys": [[[1]], [[1]]], "num_heads": 1}',
         "$.keys: expected batch 1 like $.queries (1, 1, 1), got shape (2, 1, 1)"),
        ("values_len.json", '{"queries": [[[1]]], "keys": [[[1], [2]]], "values": [[[1]]], '
         '"num_heads": 1}',
         "$.values: expected shape (1, 2, value_size) to pair with $.keys (1, 2, 1), got "
         "(1, 1, 1)"),
        ("qtok.json", '{"queries": [[[1]]], "query_tokens": [1], "num_heads": 1}',
         "$.query_tokens[0]: expected a string, got a number"),
        ("ktok.json", '{"queries": [[[1]]], "key_tokens": [], "num_heads": 1}',
         "$.key_tokens: expected a non-empty array of strings, got an empty array"),
    ]:
        path = jfile(name, text)
        expect(["multihead", "--input", path], 1, err=M + "%s: %s" % (path, msg))

    # ---- outputs that cannot be written, for multihead and complexity
    ok = jfile("ok.json", '{"queries": [[[1, 2], [3, 4]]], "num_heads": 1}')
    tiny = ["--measure", "--sweep", "2:4", "--measure-dim", "2", "--reps", "1"]
    missing = os.path.join(tmp, "no", "such", "out")
    for cmd, base, P in [("multihead", ["multihead", "--input", ok], M),
                         ("selfattn", ["selfattn", "--hiddens", "4", "--heads", "1"],
                          "attn selfattn: "),
                         ("complexity", ["complexity"] + tiny, "attn complexity: ")]:
        for opt in ["--json", "--png"]:
            expect(base + [opt, missing], 1,
                   err=P + "%s: cannot create: No such file or directory" % missing)
            expect(base + [opt, tmp], 1, err=P + "%s: cannot write: Is a directory" % tmp)
            expect(base + [opt, "/dev/full"], 1,
                   err=P + "/dev/full: cannot write: No space left on device")
            if os.geteuid() != 0:
                ro = os.path.join(tmp, "ro")
                os.makedirs(ro, 0o555, exist_ok=True)
                expect(base + [opt, os.path.join(ro, "x")], 1,
                       err=P + "%s: cannot create: Permission denied" % os.path.join(ro, "x"))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base, stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s > /dev/full: exit 1 and a message (%d %r)" % (cmd, rc, errtext))
        with open("/dev/full", "w") as full:
            rc, out, errtext = run(base + ["--json", "-"], stdout=full)
        check(rc == 1 and errtext == P + "write error on standard output: No space left on "
              "device\n", "%s --json - > /dev/full (%d %r)" % (cmd, rc, errtext))
    check(not os.path.exists(os.path.join(tmp, "no")), "nothing created for a missing folder")
    # a closed pipe: quiet on SIGPIPE or exit 1 with a message, never a crash
    for args in ["multihead --json -", "complexity --json -", "posenc --steps 3000 --json -",
                 "selfattn --queries 300 --json -"]:
        with tempfile.TemporaryFile() as errf:
            p = subprocess.Popen(VALGRIND + [common.ATTN] + args.split(), stdout=subprocess.PIPE,
                                 stderr=errf)
            head = subprocess.run(["head", "-c", "1"], stdin=p.stdout, stdout=subprocess.PIPE)
            p.stdout.close()
            rc = p.wait(timeout=1200)
            errf.seek(0)
            err = errf.read().decode("utf-8", "replace")
        msg = "attn %s: write error on standard output: Broken pipe\n" % args.split()[0]
        check(head.stdout == b"{" and (rc, err) in [(0, ""), (-signal.SIGPIPE, ""), (1, msg)],
              "%s | head -c 1: exit 0, quiet on SIGPIPE or exit 1 with a message, never a "
              "crash (exit %d, %r)" % (args, rc, err))

    # ---- nothing lost: a failed run leaves an existing file untouched and
    # no temporary file; the input is never written
    keep_json, keep_png = os.path.join(tmp, "keep.json"), os.path.join(tmp, "keep.png")
    for f in [keep_json, keep_png]:
        with open(f, "wb") as fh:
            fh.write(b"old contents")
    bad = os.path.join(tmp, "multihead_ragged.json")
    for args in [["multihead", "--input", bad, "--json", keep_json, "--png", keep_png],
                 ["selfattn", "--input", os.path.join(tmp, "selfattn_deep.json"),
                  "--json", keep_json],
                 ["multihead", "--queries", "100000", "--kv", "100000", "--hiddens", "8",
                  "--heads", "8", "--batch", "8", "--json", keep_json, "--png", keep_png],
                 ["complexity", "--measure", "--max-mem", "1M", "--json", keep_json,
                  "--png", keep_png],
                 ["posenc", "--steps", "100000", "--similarity", keep_png, "--json", keep_json],
                 ["multihead", "--input", ok, "--json", keep_json, "--png",
                  os.path.join(tmp, "no", "x.png")]]:
        rc, out, errtext = run(args)
        check(rc == 1, "%s: exit 1 (%d %r)" % (" ".join(args), rc, errtext))
        if "x.png" not in args[-1]:
            check(open(keep_json, "rb").read() == b"old contents" and
                  open(keep_png, "rb").read() == b"old contents",
                  "%s: the existing files are untouched" % " ".join(args))
    # (the last: the JSON was written before the PNG failed; it is complete)
    check(json.load(open(keep_json))["command"] == "multihead",
          "a file written before a later failure is complete")
    left = [n for n in os.listdir(tmp) if n.startswith(("keep.", ".keep")) and
            n not in ("keep.json", "keep.png")]
    check(left == [], "no temporary files left behind: %r" % left)
    # an output naming the input is refused; the input is never written
    for opt in ["--json", "--png"]:
        expect(["multihead", "--input", ok, opt, ok], 2,
               err=M + "%s %s is the --input file, which attn never overwrites" % (opt, ok))
    alias = os.path.join(tmp, "alias.json")
    os.symlink(ok, alias)
    expect(["multihead", "--input", ok, "--json", alias], 2,
           err=M + "--json %s is the --input file, which attn never overwrites" % alias)
    # inputs near float32's limits: finite weights summing to 1, finite outputs
    rnd = random.Random(5)
    X = [[[rnd.choice([-3e38, 3e38, 1e30, -1e30]) for _ in range(4)] for _ in range(5)]]
    path = jfile("limits.json", json.dumps({"X": X, "num_heads": 2}))
    for extra in [[], ["--naive"], ["--stream"], ["--causal"]]:
        rc, out, _ = expect(["selfattn", "--input", path, "--json", "-"] + extra, 0, err="")
        doc = json.loads(out)
        outs = [x for r in doc["output"][0] for x in r]
        check(all(math.isfinite(x) for x in outs), "%s: finite outputs" % extra)
        if doc["attention_weights"] is not None:
            rows = [r for h in doc["attention_weights"][0] for r in h]
            check(all(math.isfinite(x) for r in rows for x in r) and
                  all(abs(sum(r) - 1) <= 1e-6 for r in rows),
                  "%s: weights finite, each row sums to 1" % extra)
    check(all(sha(p) == h for p, h in inputs.items()),
          "every input file is unchanged after all the runs that read it")
    check(len(inputs) >= 100, "the catalogue has its inputs (%d)" % len(inputs))
