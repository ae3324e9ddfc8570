# scripts/setup.sh — sourced by scripts/attn, scripts/test and the other
# scripts: install what is missing, configure build folders, recompile.
# Not run on its own.

ATTN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The WebAssembly module every --html page carries (SPEC §14, meson.build):
# Debian's clang for wasm32-wasi with its C library and runtime, lld's
# wasm-ld, and Node to run the module in the tests. Its cJSON is compiled
# from Debian's source of libcjson-dev (no wasm32 build is packaged):
# attn_wasm_cjson fetches it.
ATTN_WASM_PACKAGES="clang lld wasi-libc libclang-rt-14-dev-wasm32 nodejs"
ATTN_CJSON_VERSION=1.7.15
ATTN_CJSON_SHA256=5308fd4bd90cef7aa060558514de6a1a4a0819974a26e6ed13973c5f624c24b2
ATTN_CJSON_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/attn/cJSON-$ATTN_CJSON_VERSION"

# Debian packages attn needs to build and run (SPEC 1): the tools, cJSON,
# stb (PNG writing, TrueType text), libdeflate (compresses the PNGs),
# fontconfig (finds a font for labels DejaVu Sans lacks), DejaVu Sans (built
# into attn), scdoc (the man page, build/attn.1) and one CJK font, so that
# the chapter's 苹果 examples are labelled and the tests can draw them:
# fonts-wqy-microhei, one 5 MB file (wqy-microhei.ttc, two faces) that
# covers the CJK ideographs, kana and hangul (fonts-noto-cjk: about 90 MB).
# dataset-fashion-mnist: the four IDX files `attn train --task vit` reads
# (/usr/share/datasets/fashion-mnist, 30 MB), d2l.ai 11.8's data.
# gettext (xgettext and msgfmt: the catalogues of po/, SPEC 17) and
# locales (the zh_CN.UTF-8 locale that GNU gettext needs before it speaks
# Chinese: attn_zh_locale makes it).
ATTN_PACKAGES="meson ninja-build pkg-config gcc libc6-dev libcjson-dev libstb-dev libdeflate-dev
  libfontconfig-dev fonts-dejavu-core fonts-wqy-microhei scdoc gettext locales dataset-fashion-mnist
  $ATTN_WASM_PACKAGES"

# attn_zh_locale: the zh_CN.UTF-8 locale, made with localedef when missing
# (a fresh Debian has none: GNU gettext would then write English, and attn
# says so in one line). Not root: the line to run, and English meanwhile.
attn_zh_locale() {
    locale -a 2>/dev/null | grep -qix 'zh_CN.utf8' && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "attn speaks 中文 once the locale exists: sudo localedef -i zh_CN -f UTF-8 zh_CN.UTF-8" >&2
        return 0
    fi
    localedef -i zh_CN -f UTF-8 zh_CN.UTF-8 || {
        echo "localedef -i zh_CN -f UTF-8 zh_CN.UTF-8 failed" >&2
        exit 1
    }
}


# attn_wasm_cjson: cJSON's source (Debian's orig tarball of cjson, checked
# against its SHA-256) in ATTN_CJSON_DIR, once per machine.
attn_wasm_cjson() {
    [ -f "$ATTN_CJSON_DIR/cJSON.c" ] && return 0
    local tmp url="http://deb.debian.org/debian/pool/main/c/cjson/cjson_$ATTN_CJSON_VERSION.orig.tar.gz"
    tmp=$(mktemp -d)
    echo "fetching cJSON $ATTN_CJSON_VERSION's source from Debian for the pages' WebAssembly module ..." >&2
    if ! python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=60).read())' \
            "$url" "$tmp/cjson.tar.gz" 2>/dev/null ||
        [ "$(sha256sum "$tmp/cjson.tar.gz" | cut -d' ' -f1)" != "$ATTN_CJSON_SHA256" ]; then
        echo "could not fetch $url (or its checksum differs): the pages will be static" >&2
        rm -rf "$tmp"
        return 0
    fi
    mkdir -p "$(dirname "$ATTN_CJSON_DIR")" && tar -xzf "$tmp/cjson.tar.gz" -C "$tmp" &&
        rm -rf "$ATTN_CJSON_DIR" && mv "$tmp/cJSON-$ATTN_CJSON_VERSION" "$ATTN_CJSON_DIR"
    rm -rf "$tmp"
}

# attn_missing_packages PKG…: print those of the packages (name or
# name:arch) that are not installed, one a line. A name without an
# architecture means this machine's: once a package is installed for two
# (libcjson-dev and libcjson-dev:arm64), dpkg-query lists both.
attn_missing_packages() {
    local p native
    native=$(dpkg --print-architecture)
    for p in "$@"; do
        dpkg-query -W -f='${binary:Package} ${Status}\n' "$p" 2>/dev/null |
            awk -v p="$p" -v n="$p:$native" '($1 == p || $1 == n) && $2 " " $3 " " $4 == "install ok installed" { ok = 1 }
                END { exit !ok }' || echo "$p"
    done
}

# attn_need_packages PKG…: install the packages that are missing (with
# apt-get when root), or print the apt-get line and exit 1.
attn_need_packages() {
    local missing=()
    mapfile -t missing < <(attn_missing_packages "$@")
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "attn needs these Debian packages; install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "installing ${missing[*]} ..." >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || {
            echo "apt-get install ${missing[*]} failed" >&2
            exit 1
        }
    fi
}

# attn_build DIR [meson options…]: configure DIR once (again when the
# options recorded in it differ, or the compiler CC names), then bring it
# up to date quietly. Exits 1 when it fails.
attn_build() {
    local dir=$1
    shift
    attn_wasm_cjson
    [ ! -f "$ATTN_CJSON_DIR/cJSON.c" ] || set -- "$@" "-Dwasm_cjson=$ATTN_CJSON_DIR"
    local stamp="$ATTN_ROOT/$dir/.attn-options" want="$*"
    [ -z "${CC:-}" ] || want="CC=$CC $want"
    if [ ! -f "$ATTN_ROOT/$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        rm -rf "${ATTN_ROOT:?}/$dir"
        meson setup "$ATTN_ROOT/$dir" "$ATTN_ROOT" "$@" >"$ATTN_ROOT/.setup-$dir.log" 2>&1 || {
            cat "$ATTN_ROOT/.setup-$dir.log" >&2
            echo "meson setup $dir failed" >&2
            exit 1
        }
        rm -f "$ATTN_ROOT/.setup-$dir.log"
        echo "$want" >"$stamp"
    fi
    # ninja recompiles only what changed; its output only when it fails
    local log
    if ! log=$(ninja -C "$ATTN_ROOT/$dir" 2>&1); then
        echo "$log" >&2
        echo "build in $dir failed" >&2
        exit 1
    fi
}

# The optimized release build that scripts/attn runs.
attn_build_release() {
    attn_need_packages $ATTN_PACKAGES
    attn_zh_locale
    attn_build build --buildtype=release -Db_ndebug=if-release -Dman=enabled
}

# The other builds of scripts/test and scripts/reproducible (which reuses
# them: the same options, so that neither reconfigures the other's):
# gcc for the x86-64-v3 baseline (-Dnative=false: AVX2 and FMA, which
# valgrind 3.19 runs, where it cannot run AVX-512), clang's release build,
# and gcc's aarch64 cross build (run under qemu-aarch64).
attn_build_valgrind() {
    attn_build build-valgrind --buildtype=debugoptimized -Dnative=false
}
attn_build_clang() {
    CC=clang attn_build build-clang --buildtype=release -Db_ndebug=if-release
}
# -fno-tree-loop-vectorize works around an internal compiler error of
# Debian's gcc 12 for aarch64 (12.2.0-14cross1) when it auto-vectorises
# the fmax reductions of posenc_check_relative (src/nn/attention/posenc.c) and of
# src/nn/attention/properties.c ("in vect_transform_reduction, at
# tree-vect-loop.cc:7457"); the loops marked `#pragma omp simd` are still
# vectorised. Drop it once those loops no longer crash the compiler.
attn_build_aarch64() {
    attn_need_arm64
    (
        unset CC
        attn_build build-aarch64 --cross-file "$ATTN_ROOT/scripts/cross/aarch64-linux-gnu.ini" \
            --buildtype=release -Dnative=false -Dc_args=-fno-tree-loop-vectorize
    ) || exit 1
}

# npm's playwright-core for the browser tests, pinned by
# tests/browser/package-lock.json, into tests/browser/node_modules/ (again
# when the lock file changed); no browser download: the tests use Debian's
# /usr/bin/chromium.
attn_browser_tests_ready() {
    local dir="$ATTN_ROOT/tests/browser" stamp="$ATTN_ROOT/tests/browser/node_modules/.attn-lock"
    if [ -f "$stamp" ] && cmp -s "$stamp" "$dir/package-lock.json"; then
        return 0
    fi
    echo "installing playwright-core for the browser tests (npm ci) ..." >&2
    (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >/dev/null) || {
        echo "npm ci in tests/browser failed" >&2
        exit 1
    }
    cp "$dir/package-lock.json" "$stamp"
}

# The aarch64 leg of scripts/reproducible: Debian's cross gcc (with its
# libgomp, for OpenMP), qemu-user to run the arm64 binary on this machine,
# and attn's libraries for arm64 through Debian's multiarch (their
# headers, libraries and pkg-config files under /usr/lib/aarch64-linux-gnu;
# libc6:arm64 comes with them, and with it /lib/ld-linux-aarch64.so.1).
ATTN_ARM64_PACKAGES="gcc-aarch64-linux-gnu libgomp1-arm64-cross qemu-user libc6:arm64
  libgomp1:arm64 libcjson-dev:arm64 libstb-dev:arm64 libdeflate-dev:arm64 libfontconfig-dev:arm64"

# attn_need_arm64: add dpkg's arm64 architecture (then apt-get update)
# and install ATTN_ARM64_PACKAGES when missing, as root; otherwise print
# the exact commands and exit 1.
attn_need_arm64() {
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        if [ "$(id -u)" -ne 0 ]; then
            echo "attn's aarch64 build needs dpkg's arm64 architecture and these packages; add them with:" >&2
            echo "  sudo dpkg --add-architecture arm64" >&2
            echo "  sudo apt-get update" >&2
            echo "  sudo apt-get install -y" $ATTN_ARM64_PACKAGES >&2
            exit 1
        fi
        echo "adding dpkg's arm64 architecture ..." >&2
        dpkg --add-architecture arm64 &&
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || {
            echo "dpkg --add-architecture arm64 or apt-get update failed" >&2
            exit 1
        }
    fi
    attn_need_packages $ATTN_ARM64_PACKAGES
}
