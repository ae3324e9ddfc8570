#!/usr/bin/env bash
# static_setup.sh SOURCE_ROOT — attn configured where no WebAssembly
# toolchain is wanted (-Dwasm=disabled, as -Dwasm=auto where none is
# found): Meson accepts the tree, and the module's text it embeds is
# empty, so that the pages are written static (SPEC.md §14). Only the
# configuration and that one generated file are made, in a temporary
# folder: a few seconds.
set -euo pipefail
src=${1:?usage: static_setup.sh SOURCE_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! meson setup "$tmp/b" "$src" -Dwasm=disabled >"$tmp/setup.log" 2>&1; then
    cat "$tmp/setup.log"
    echo "static_setup: meson setup -Dwasm=disabled failed"
    exit 1
fi
ninja -C "$tmp/b" wasm_module.c >"$tmp/ninja.log" 2>&1 || {
    cat "$tmp/ninja.log"
    echo "static_setup: the module's text could not be made"
    exit 1
}
if ! grep -qx "const unsigned long attn_wasm_module_b64_len = 0;" "$tmp/b/wasm_module.c"; then
    echo "static_setup: the module's text is not empty without a toolchain:"
    grep "attn_wasm_module_b64_len" "$tmp/b/wasm_module.c" || true
    exit 1
fi
echo "static_setup: -Dwasm=disabled configures, and the pages' module is empty"
