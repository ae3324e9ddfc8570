#!/usr/bin/env python3
"""CLI tests for attn: exit codes, exact error lines, outputs and files.

usage: cli_test.py ATTN GROUP

Each group is one meson test. A case runs attn with arguments and checks
the exit status, the exact stderr line for errors, what stdout contains,
and which files exist afterwards. Meson's should_fail cannot check an exact
exit code, hence this runner. Only the standard library is used.

The groups live in tests/cli/, one file per topic: a function
group_NAME(tmp) in any module there is the group NAME, run in a fresh
temporary folder tmp. tests/cli/common.py holds what the groups share
(run, check, expect, png_info, write, sha, the valgrind wrapper, the fonts
every run sees). The run ends with the line "NAME: N checks, N failed"
and exits 1 when a check failed.

To add a group, e.g. train:
  1. write tests/cli/train.py with `def group_train(tmp):`, importing what
     it uses from .common (`from .common import check, expect, run`);
  2. add 'train' to the group list in tests/meson.build: meson then runs
     it as the test cli_train (suite cli), and under --setup=valgrind.
Nothing else names the groups.
"""
import importlib
import os
import pkgutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import cli  # noqa: E402  (tests/cli/, beside this script)
from cli import common  # noqa: E402


def groups():
    """{NAME: group_NAME} for every module of tests/cli/, in file order."""
    found = {}
    for info in sorted(pkgutil.iter_modules(cli.__path__), key=lambda m: m.name):
        mod = importlib.import_module("cli." + info.name)
        for attr, fn in vars(mod).items():
            if attr.startswith("group_") and callable(fn) and fn.__module__ == mod.__name__:
                name = attr[len("group_"):]
                if name in found:
                    sys.exit("cli_test.py: group %s is defined in %s and in %s"
                             % (name, found[name].__module__, mod.__name__))
                found[name] = fn
    return found


def main():
    found = groups()
    if len(sys.argv) != 3 or sys.argv[2] not in found:
        sys.exit("usage: cli_test.py ATTN {%s}" % ",".join(found))
    common.ATTN = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="attn-cli-") as tmp:
        # fontconfig sees no fonts unless a case says otherwise
        common.FONTS_ENV["FONTCONFIG_FILE"] = common.fc_config(
            os.path.join(tmp, "fc-default.conf"))
        found[sys.argv[2]](tmp)
    print("%s: %d checks, %d failed" % (sys.argv[2], common.COUNT, len(common.FAILED)))
    sys.exit(1 if common.FAILED else 0)


if __name__ == "__main__":
    main()
