#!/bin/bash
# completion_test.sh — tests of completion/attn.bash, run by bash without
# the bash-completion package (none of its helpers may be needed).
#
# usage: completion_test.sh ATTN COMPLETION_SCRIPT
#
# Each case sets COMP_WORDS and COMP_CWORD as bash does when TAB is
# pressed, calls _attn with ATTN's folder first on PATH, and compares
# COMPREPLY (as a sorted set) with what attn itself says: its commands
# (--list-commands, the same as --help lists), each command's options and
# their values (--list-options, the same options as its help). Ends with
# "completion: N checks, M failed"; the exit status is 1 when any failed.

set -u
if [ $# -ne 2 ]; then
    echo "usage: completion_test.sh ATTN COMPLETION_SCRIPT" >&2
    exit 2
fi
attn_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
script=$2
checks=0
failed=0

if declare -F _init_completion >/dev/null; then
    echo "FAIL: bash-completion is loaded here; this test must run without it"
    exit 1
fi
# shellcheck source=/dev/null
source "$script" || { echo "FAIL: cannot source $script"; exit 1; }
PATH=$(dirname "$attn_bin"):$PATH
[ "$(command -v attn)" = "$attn_bin" ] || { echo "FAIL: attn on PATH is not $attn_bin"; exit 1; }

check() { # check CONDITION-STATUS WHAT
    checks=$((checks + 1))
    if [ "$1" -ne 0 ]; then
        failed=$((failed + 1))
        echo "FAIL: $2"
    fi
}

# complete WORD… : COMPREPLY for the command line WORD…, the last word
# being the one under the cursor; its entries, sorted, one a line, in $got.
complete_line() {
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _attn
    got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u | sed '/^$/d')
}

sorted() { printf '%s\n' "$@" | LC_ALL=C sort -u | sed '/^$/d'; }

# expect "WANT…" WORD…: the completions are exactly the words of WANT
# (split at blanks; at newlines when WANT has one, for names with spaces).
expect() {
    local want
    if [[ $1 == *$'\n'* ]]; then
        want=$(sorted "$1")
    else
        want=$(sorted $1)
    fi
    shift
    complete_line "$@"
    [ "$got" = "$want" ]
    check $? "'$*': got [$(echo $got)], want [$(echo $want)]"
}

# expect_has "WANT…" WORD…: the completions include the words of WANT.
expect_has() {
    local w missing=
    local want=$1
    shift
    complete_line "$@"
    for w in $want; do
        grep -qxF -- "$w" <<<"$got" || missing="$missing $w"
    done
    [ -z "$missing" ]
    check $? "'$*': lacks$missing (got [$(echo $got)])"
}

# ---- commands -----------------------------------------------------------

# The commands of attn --list-commands, which are those attn --help lists.
commands=$(attn --list-commands)
[ -n "$commands" ]
check $? "attn --list-commands lists commands"
helped=$(attn --help | sed -n '/^Commands:$/,/^$/p' | grep -oE '^  [a-z]+' | tr -d ' ')
[ "$(sorted $commands)" = "$(sorted $helped)" ]
check $? "attn --list-commands [$(echo $commands)] is what attn --help lists [$(echo $helped)]"
expect_has "posenc multihead selfattn complexity help" attn ""
expect "$commands"$'\nhelp' attn ""
expect "pool posenc" attn po
expect "help" attn hel
expect "heatmap" attn hea
expect "--help --version" attn -
expect "--version" attn --v
expect "$commands" attn help ""
expect "" attn help posenc ""
expect "" attn frobnicate --

# ---- options --------------------------------------------------------------

expect "--dim" attn posenc --d
expect "--dim" attn posenc --di
expect "--similarity" attn posenc --si

# every option of every command is offered, and nothing else; they are
# those of its help's Options block; each value is completed as its line
# in --list-options says (choices, files, folders), by long and short name
tmpv=$(mktemp -d)
touch "$tmpv/only.file"
mkdir "$tmpv/odir"
for cmd in $commands; do
    listed=$(attn "$cmd" --list-options)
    opts=$(cut -d' ' -f1 <<<"$listed")
    [ -n "$opts" ]
    check $? "attn $cmd --list-options lists options"
    helped=$(attn "$cmd" --help | sed -n '/^Options:$/,/^$/p' |
        grep -oE '^(  -[a-zA-Z0-9], |      )--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$')
    [ "$(sorted $opts)" = "$(sorted $helped)" ]
    check $? "attn $cmd: --list-options and the help's Options block name the same options"
    expect "$opts" attn "$cmd" --
    expect "$opts" attn "$cmd" ""
    while read -r name letter arg kind choices; do
        case $kind in
        choice) want=$choices ;;
        value) want=$choices ;;
        file) want="$tmpv/odir $tmpv/only.file" ;;
        dir) want=$tmpv/odir ;;
        *) want="" ;;
        esac
        [[ $cmd == tour && $name == --step ]] && continue # step names: below
        if [[ $kind == dir || $kind == file ]]; then
            expect "$want" attn "$cmd" "$name" "$tmpv/o"
            [[ $letter != - ]] && expect "$want" attn "$cmd" "$letter" "$tmpv/o"
        elif [[ $arg != - ]]; then
            expect "$want" attn "$cmd" "$name" ""
            [[ $letter != - ]] && expect "$want" attn "$cmd" "$letter" ""
        fi
    done <<<"$listed"
done
rm -rf "$tmpv"
opts=$(attn selfattn --help | grep -oE -- '^ +(-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+$')
expect_has "$opts --tokens --png --font --help" attn selfattn --

# an option given once is not offered again (attn refuses it twice)
complete_line attn posenc --dim 4 --
! grep -qx -- --dim <<<"$got" && grep -qx -- --steps <<<"$got"
check $? "attn posenc --dim 4 --: no --dim, but --steps (got [$(echo $got)])"
complete_line attn posenc -d 4 --png=x.png --
! grep -qxE -- '--dim|--png' <<<"$got" && grep -qx -- --plot <<<"$got"
check $? "attn posenc -d 4 --png=x.png --: no --dim, no --png (got [$(echo $got)])"
expect "" attn posenc notanoption

# ---- values ---------------------------------------------------------------

expect "Reds Blues viridis gray" attn posenc --cmap ""
expect "Blues" attn posenc --cmap B
expect "Reds Blues viridis gray" attn selfattn --cmap ""
expect "auto always never" attn posenc --color ""
expect "always auto" attn multihead --color a
expect "ones random" attn multihead --fill ""
expect "dot additive" attn selfattn --score ""
expect "additive dot general sum" attn score --score ""
expect "ones random" attn score --keys ""
expect "--valid-lens" attn score --va
expect "--html --help" attn score --h
expect "cpu wall" attn complexity --clock ""
expect "interleaved concat" attn posenc --layout ""
expect "reverse previous apple induction translate lm vit" attn train --task ""
expect "train translate" attn tr
expect "--all" attn translate --al
expect "--reference" attn translate --r
expect "Reds Blues viridis gray" attn translate -i m.json --cmap ""
expect "adam sgd" attn train --optimizer ""
expect "--no-posenc" attn train --no-p
# tour --step: the step names, as attn tour --list gives them
expect "cues pooling scoring bahdanau cross multihead selfattn context scaling complexity order posenc binary relative rope learned circuits vit" \
    attn tour --step ""
expect "relative rope" attn tour --step r
expect "--step=pooling --step=posenc" attn tour --step=p
expect_has "tour" attn t
# --opt=VALUE: split at '=' by bash's COMP_WORDBREAKS, or whole
expect "Reds Blues viridis gray" attn posenc --cmap =
expect "viridis" attn posenc --cmap = v
expect "--cmap=viridis" attn posenc --cmap=v
expect "--fill=ones --fill=random" attn selfattn --fill=
# numbers and other values: nothing to offer
expect "" attn posenc --dim ""
expect "" attn posenc -d ""
expect "" attn complexity --n 1
expect "" attn selfattn --tokens ""

# files and folders, names with spaces included
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/sub dir"
touch "$tmp/a b.png" "$tmp/font.ttf" "$tmp/sub dir/in.json"
cd "$tmp" || exit 1
files=$'a b.png\nfont.ttf\nsub dir'
for opt in --png --json --font; do
    expect "$files" attn posenc "$opt" ""
done
expect "$files" attn selfattn --input ""
expect "$files" attn selfattn -i ""
expect "font.ttf" attn selfattn --font f
expect $'sub dir/in.json\n' attn multihead --input "sub dir/"
expect $'sub dir/in.json\n' attn multihead --input "sub\\ dir/i"
expect $'sub dir/in.json\n' attn multihead --input "'sub dir/i"
expect "$files" attn posenc --plot ""
expect "$files" attn posenc --similarity ""
expect "--png=font.ttf" attn posenc --png=f
if attn tour --help | grep -q -- '--out DIR'; then
    expect $'sub dir\n' attn tour --out ""
    expect $'sub dir\n' attn tour -o s
else
    echo "skipped: --out completes folders (attn tour has no --out yet)"
fi

echo "completion: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
