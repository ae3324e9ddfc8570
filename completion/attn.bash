# attn.bash — bash completion for attn.
#
# `meson install` puts this file where bash-completion loads completions
# on demand (its completionsdir, as "attn"); without bash-completion,
# `source completion/attn.bash` in ~/.bashrc does the same. It needs bash
# 4.3 or later and nothing else: no helper of the bash-completion
# package, no awk or sed.
#
# Nothing is listed here that attn can say itself, so the completion is
# always true to the attn being completed (the one typed: attn on PATH,
# or ./build/attn), and runs it at every TAB:
#   attn <TAB>          the commands (`attn --list-commands`) and help
#   attn -<TAB>         --help --version
#   attn help <TAB>     the commands
#   attn CMD -<TAB>     the long options of `attn CMD --list-options` (from
#                       the command's option table), less those already
#                       given (attn refuses an option given twice)
#   after an option     what its line in --list-options says: file names
#                       for a file, directories for a dir, the choices of
#                       a choice (--color, --fill, --layout, …) or of a
#                       value that lists them (--cmap); the step names of
#                       tour --step (from `attn tour --list`); nothing for
#                       numbers and other values.
# --opt=VALUE is completed too, whether or not COMP_WORDBREAKS holds '='.

# The commands of attn $1, one a line, and help.
_attn_commands()
{
    "$1" --list-commands 2>/dev/null
    printf '%s\n' help
}

# The options of `attn CMD --list-options` ($1 attn, $2 CMD), one a line
# as attn prints them: "--name -x ARG KIND [CHOICE…]", "-" for no short
# name and no argument.
_attn_options()
{
    "$1" "$2" --list-options 2>/dev/null
}

# $1 without the shell quoting of a word being typed: an opening ' or "
# (the closing one is not typed yet), and backslashes outside '…'.
_attn_dequote()
{
    local s=$1 out= c i
    if [[ $s == \'* ]]; then
        printf '%s' "${s:1}"
        return
    fi
    [[ $s == \"* ]] && s=${s:1}
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if [[ $c == \\ ]] && ((i + 1 < ${#s})); then
            i=$((i + 1))
            c=${s:i:1}
        fi
        out+=$c
    done
    printf '%s' "$out"
}

# The step names of `attn tour --list` ($1 attn), one a line.
_attn_tour_steps()
{
    local line
    while IFS= read -r line; do
        [[ $line =~ ^\ ?[0-9]+\ \ ([a-z]+)\  ]] && printf '%s\n' "${BASH_REMATCH[1]}"
    done < <("$1" tour --list 2>/dev/null)
}

# COMPREPLY: the values of option $1 (its kind and choices in $2, as
# "KIND CHOICE…") that start with $3, each prefixed with $4 (for
# --opt=VALUE words); $5 is attn, $6 the command.
_attn_values()
{
    local opt=$1 cur=$3 prefix=$4 kind=${2%% *} choices= word
    [[ $2 == *' '* ]] && choices=${2#* }
    [[ $opt == --step && $6 == tour ]] && choices=$(_attn_tour_steps "$5")
    COMPREPLY=()
    if [[ $kind == file || $kind == dir ]]; then
        # file names, quoted by bash and with a slash after directories;
        # the word as typed may be quoted or escaped: compgen wants it bare
        compopt -o filenames 2>/dev/null
        cur=$(_attn_dequote "$cur")
        local -a names=()
        if [[ $kind == dir ]]; then
            mapfile -t names < <(compgen -d -- "$cur")
        else
            mapfile -t names < <(compgen -f -- "$cur")
        fi
        for word in "${names[@]}"; do
            COMPREPLY+=("$prefix$word")
        done
    elif [[ -n $choices ]]; then
        for word in $choices; do
            [[ $word == "$cur"* ]] && COMPREPLY+=("$prefix$word")
        done
    fi
}

_attn()
{
    local IFS=$' \t\n' # whatever the user's, for the loops below
    local cword=$COMP_CWORD
    local cur=${COMP_WORDS[cword]} prev=
    ((cword > 0)) && prev=${COMP_WORDS[cword - 1]}
    local attn=${COMP_WORDS[0]} word
    [[ $attn == "~/"* ]] && attn=$HOME/${attn#"~/"}
    COMPREPLY=()

    # The command word.
    if ((cword == 1)); then
        if [[ $cur == -* ]]; then
            for word in --help --version; do
                [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
            done
        else
            while IFS= read -r word; do
                [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
            done < <(_attn_commands "$attn")
        fi
        return 0
    fi
    local cmd=${COMP_WORDS[1]}
    if [[ $cmd == help ]]; then
        if ((cword == 2)); then
            while IFS= read -r word; do
                [[ $word != help && $word == "$cur"* ]] && COMPREPLY+=("$word")
            done < <(_attn_commands "$attn")
        fi
        return 0
    fi
    [[ $cmd == -* ]] && return 0

    # The command's options, in the table's order: long[--name]=KIND
    # CHOICE… for those that take a value ("" for a flag), short[-x]=--name.
    local -A long=() short=()
    local -a names=()
    local name letter arg kind choices
    while read -r name letter arg kind choices; do
        [[ $name == --* ]] || continue
        names+=("$name")
        long[$name]=
        [[ $arg != - ]] && long[$name]="$kind${choices:+ $choices}"
        [[ $letter != - ]] && short[$letter]=$name
    done < <(_attn_options "$attn" "$cmd")
    ((${#names[@]})) || return 0

    # A value: "--opt VALUE", "--opt=VALUE" split at '=' by bash
    # (words --opt, =, VALUE), or kept whole.
    local opt=
    if [[ $cur == = ]]; then
        opt=$prev
        cur=
    elif [[ $prev == = ]] && ((cword >= 3)); then
        opt=${COMP_WORDS[cword - 2]}
    elif [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        _attn_values "$opt" "${long[$opt]-}" "${cur#*=}" "$opt=" "$attn" "$cmd"
        return 0
    elif [[ -v short[$prev] && -n ${long[${short[$prev]}]} ]]; then
        opt=${short[$prev]}
    elif [[ $prev == --* && -n ${long[$prev]-} ]]; then
        opt=$prev
    fi
    if [[ -n $opt ]]; then
        [[ -v long[$opt] ]] && _attn_values "$opt" "${long[$opt]}" "$cur" "" "$attn" "$cmd"
        return 0
    fi

    # Options, less those already on the line.
    [[ -z $cur || $cur == -* ]] || return 0
    local -A given=()
    local i
    for ((i = 2; i < cword; i++)); do
        word=${COMP_WORDS[i]%%=*}
        [[ -v short[$word] ]] && word=${short[$word]}
        given[$word]=1
    done
    for name in "${names[@]}"; do
        [[ -v given[$name] || $name != "$cur"* ]] || COMPREPLY+=("$name")
    done
    return 0
}

complete -F _attn attn
