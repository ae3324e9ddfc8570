"""attn train's stream of steps for a page that trains (ATTN_PAGE_STREAM,
cmd/page_out.h, cmd/train/train_page.h): one JSON line per run and per
logged step, only when a page asks for it with ATTN_PAGE_DATA too; the
terminal's bytes never change."""

import base64
import json
import os
import struct
import subprocess

from . import common
from .common import check, run

ARGS = ["train", "--task", "reverse", "--steps", "60", "--log-every", "20"]


def _with_fds(tmp, args, env):
    """Run attn with descriptors 3 and 4 open on files; their bytes."""
    paths = [os.path.join(tmp, "fd3.out"), os.path.join(tmp, "fd4.out")]
    files = [open(p, "wb") for p in paths]
    e = dict(os.environ)
    e.update(env)
    try:
        # descriptors 3 and 4 in the child, open across exec (a file of
        # the parent may be 3 or 4 already: dup2 would keep it close-on-exec)
        def place():
            for fd, f in ((3, files[0]), (4, files[1])):
                if f.fileno() != fd:
                    os.dup2(f.fileno(), fd)
                os.set_inheritable(fd, True)
        p = subprocess.run(common.VALGRIND + [common.ATTN] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, preexec_fn=place, close_fds=False,
                           timeout=1200, cwd=tmp)
    finally:
        for f in files:
            f.close()
    out = [open(p, "rb").read() for p in paths]
    return p.returncode, p.stdout, p.stderr, out[0], out[1]


def group_train_stream(tmp):
    # the terminal's bytes: ATTN_PAGE_STREAM alone changes nothing
    rc0, out0, err0 = run(ARGS + ["--json", "-"])
    rc1, out1, err1 = run(ARGS + ["--json", "-"], env={"ATTN_PAGE_STREAM": "4"})
    check(rc0 == rc1 == 0 and out0 == out1, "ATTN_PAGE_STREAM without a page: the same --json")
    hist = json.loads(out0)["history"]

    # the page's data with and without the stream: the same bytes
    rc, _, err, data0, s0 = _with_fds(tmp, ARGS + ["--html", "-"], {"ATTN_PAGE_DATA": "3"})
    check(rc == 0 and s0 == b"", "page data alone: nothing on descriptor 4: %r" % err)
    rc, _, err, data1, lines = _with_fds(tmp, ARGS + ["--html", "-"],
                                         {"ATTN_PAGE_DATA": "3", "ATTN_PAGE_STREAM": "4"})
    check(rc == 0 and data1 == data0, "with the stream, the page data unchanged: %r" % err)
    recs = [json.loads(line) for line in lines.decode().split("\n") if line]
    head, steps = recs[0], recs[1:]
    check(head["run"] == 0 and head["kind"] == "train" and head["steps"] == 60
          and head["every"] == 20 and head["heads"] == 4 and head["length"] == 8
          and len(head["probes"]) == 1, "the run's line: %r" % {k: head[k] for k in head if k != "cmap"})
    check([r["step"] for r in steps] == [0, 1, 20, 40, 60],
          "a line per logged step, 0 first: %r" % [r["step"] for r in steps])
    check(steps[0]["history"] is None and [r["history"] for r in steps[1:]] == hist,
          "each step's figures are --json's history entry")
    page = json.loads(data1)["page"]["runs"][0]
    want = base64.b64decode(page["attention"]["base64"])
    got = b"".join(base64.b64decode(r["attention"]["base64"]) for r in steps)
    check(got == want and steps[2]["attention"]["shape"] == [1, 1, 4, 8, 8],
          "the streamed attention, step by step, is the page's (%d vs %d bytes)" % (len(got), len(want)))
    check(abs(sum(struct.unpack("<8f", got[:32])) - 1) < 1e-5, "a streamed row sums to 1")

    # a stream that is not asked for properly: ignored, nothing written there
    for bad in ["abc", "2", "3", "256", ""]:
        rc, _, err, data2, s2 = _with_fds(tmp, ARGS + ["--html", "-"],
                                          {"ATTN_PAGE_DATA": "3", "ATTN_PAGE_STREAM": bad})
        check(rc == 0 and s2 == b"" and err.decode().count("\n") <= 3 and
              (bad == "3" or data2 == data0),
              "ATTN_PAGE_STREAM=%r: ignored: %r" % (bad, err))
