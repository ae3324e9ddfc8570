/* options.c — a command's options from its table (see options.h): the
 * getopt table, the values and their checks, the rules, the help block
 * and --list-options. */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "term.h"

#define HELP_COLUMN 27 /* the help text starts here in the Options block */

const char *const opt_color_names[] = {"auto", "always", "never", NULL};

_Static_assert(TERM_COLOR_AUTO == 0 && TERM_COLOR_ALWAYS == 1 && TERM_COLOR_NEVER == 2,
               "opt_color_names is in the order of term_color_mode");

int opt_parse_cmap(void *dest, const char *value)
{
    return output_parse_cmap(value, (const attn_cmap **)dest);
}

const char *opt_cmap_names(void) { return cmap_names(); }

const char *opt_max_mem_default(void) { return CLI_DEFAULT_MAX_MEM_TEXT; }

/* "3,2" → (2,); "1,2;3,4" → (2, 2); "none". */
int opt_parse_lens(void *dest, const char *s)
{
    opt_lens *l = dest;
    const char *p = s;
    size_t n = 0, rows = 1, cols = 0, in_row = 0;
    if (strcmp(s, "none") == 0) {
        l->none = 1;
        return 0;
    }
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            goto bad;
        long v = strtol(p, &end, 10);
        if (v < 0 || v > OPT_MAX_LEN || n == OPT_MAX_VALID_LENS)
            goto bad;
        l->v[n++] = v;
        in_row++;
        p = end;
        if (*p == ',') {
            p++;
        } else if (*p == ';' || *p == '\0') {
            if (cols == 0)
                cols = in_row;
            else if (in_row != cols) {
                cli_error("--valid-lens: every row needs %zu lengths, row %zu has %zu", cols,
                          rows, in_row);
                return -1;
            }
            if (*p == '\0')
                break;
            p++;
            rows++;
            in_row = 0;
        } else {
            goto bad;
        }
    }
    l->ndim = rows > 1 ? 2 : 1;
    l->shape[0] = l->ndim == 2 ? rows : n;
    l->shape[1] = l->ndim == 2 ? cols : 1;
    return 0;
bad:
    cli_error("--valid-lens: expected integers >= 0 like 3,2 or 1,2,3,4;2,2,2,2, or none, got "
              "'%s'", s);
    return -1;
}

int opt_lens_check(const opt_lens *l, size_t B, size_t Nq, const char *from)
{
    if (l->shape[0] == B && (l->ndim == 1 || l->shape[1] == Nq))
        return 0;
    if (l->ndim == 1 && from)
        cli_error(i18n_plural("--valid-lens: expected %zu length (one per example of %s), got %zu",
                              "--valid-lens: expected %zu lengths (one per example of %s), got %zu",
                              B),
                  B, from, l->shape[0]);
    else if (l->ndim == 1)
        cli_error(i18n_plural("--valid-lens: expected %zu length (one per example), got %zu",
                              "--valid-lens: expected %zu lengths (one per example), got %zu", B),
                  B, l->shape[0]);
    else if (from)
        cli_error("--valid-lens: expected %zu rows of %zu (one per example of %s and query), got "
                  "%zu rows of %zu", B, Nq, from, l->shape[0], l->shape[1]);
    else
        cli_error("--valid-lens: expected %zu rows of %zu (one per example and query), got "
                  "%zu rows of %zu", B, Nq, l->shape[0], l->shape[1]);
    return -1;
}

static size_t count_rows(const struct opt *opts)
{
    size_t n = 0;
    while (opts[n].type != OPTION_END)
        n++;
    return n;
}

const struct opt *opt_find(const struct opt *opts, const char *long_name)
{
    for (; opts->type != OPTION_END; opts++)
        if (strcmp(opts->long_name, long_name) == 0)
            return opts;
    return NULL;
}

static int takes_value(const struct opt *o)
{
    return o->type != OPTION_FLAG && o->type != OPTION_HELP;
}

int opt_is_given(const opt_given *given, const char *long_name)
{
    const struct opt *o = opt_find(given->opts, long_name);
    if (!o) {
        fprintf(stderr, "attn: internal error: no option --%s in this table\n", long_name);
        abort();
    }
    return given->given[o - given->opts];
}

/* ---- values ----------------------------------------------------------- */

/* "expected a or b" / "expected a, b or c" */
static void choice_error(const struct opt *o, const char *value)
{
    char list[256];
    size_t len = 0, n = 0;
    while (o->choices[n])
        n++;
    list[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s",
                         i == 0 ? "" : i + 1 == n ? " or " : ", ", o->choices[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    cli_error("--%s: expected %s, got '%s'", o->long_name, list, value);
}

/* Store value into the member of o in args; 0, or -1 after the message. */
static int store(const struct opt *o, void *args, const char *value)
{
    void *dest = (char *)args + o->offset;
    char name[40];
    snprintf(name, sizeof name, "--%s", o->long_name);
    switch (o->type) {
    case OPTION_FLAG: *(int *)dest = o->set; return 0;
    case OPTION_INT: return cli_parse_long(name, value, o->min, o->max, (long *)dest);
    case OPTION_REAL: return cli_parse_double(name, value, o->rmin, o->rmax, (double *)dest);
    case OPTION_BYTES: return cli_parse_bytes(name, value, (size_t *)dest);
    case OPTION_DIR:
        if (value[0] == '\0') {
            cli_error("%s: expected a folder name, got an empty string", name);
            return -1;
        }
        /* fall through */
    case OPTION_TEXT:
    case OPTION_FILE: *(const char **)dest = value; return 0;
    case OPTION_CHOICE:
        for (int i = 0; o->choices[i]; i++)
            if (strcmp(o->choices[i], value) == 0) {
                *(int *)dest = i;
                return 0;
            }
        choice_error(o, value);
        return -1;
    case OPTION_CALLBACK: return o->callback(dest, value);
    case OPTION_HELP:
    case OPTION_END: break;
    }
    cli_error("internal error: option --%s has no handler", o->long_name);
    return -1;
}

/* ---- getopt ----------------------------------------------------------- */

/* The getopt_long tables of opts (n rows): long option i returns 256 + i,
 * a short one its character. shortopts starts with ':' (a missing value
 * is told apart from an unknown option). */
static void getopt_tables(const struct opt *opts, size_t n, struct option *longopts,
                          char *shortopts)
{
    size_t ns = 0;
    shortopts[ns++] = ':';
    for (size_t i = 0; i < n; i++) {
        longopts[i] = (struct option){opts[i].long_name,
                                      takes_value(&opts[i]) ? required_argument : no_argument,
                                      NULL, 256 + (int)i};
        if (opts[i].short_name) {
            shortopts[ns++] = opts[i].short_name;
            if (takes_value(&opts[i]))
                shortopts[ns++] = ':';
        }
    }
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns] = '\0';
}

/* getopt_long said ':' (a missing value) or '?': a value given to a flag
 * ("--naive=1"), an unknown or ambiguous long option, or an unknown short
 * one. */
static void option_error(int c, const struct opt *opts, size_t n, int argc, char **argv)
{
    if (c == ':') {
        cli_error("option '%s' needs a value", argv[optind - 1]);
        return;
    }
    /* glibc has moved past the word, and optopt is the option's value */
    const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : "";
    const char *eq = strchr(word, '=');
    if (strncmp(word, "--", 2) == 0 && eq && optopt >= 256 && (size_t)optopt - 256 < n) {
        const struct opt *o = &opts[optopt - 256];
        size_t len = (size_t)(eq - word - 2);
        if (!takes_value(o) && strncmp(o->long_name, word + 2, len) == 0) {
            cli_error("option '--%s' takes no value, got '%s'", o->long_name, word);
            return;
        }
    }
    if (optopt > 0 && optopt < 256)
        cli_error("unknown option '-%c' (see attn %s --help)", optopt, cli_command());
    else
        cli_error("unknown option '%s' (see attn %s --help)", word, cli_command());
}

/* The row of what getopt_long returned: 256 + i, or a short name. */
static const struct opt *row_of(const struct opt *opts, size_t n, int c)
{
    if (c >= 256 && (size_t)c - 256 < n)
        return &opts[c - 256];
    for (size_t i = 0; i < n; i++)
        if (opts[i].short_name && opts[i].short_name == c)
            return &opts[i];
    return NULL;
}

/* ---- rules ------------------------------------------------------------ */

/* The next name of the space-separated list at *p into name (cut to its
 * length); 0 at the end of the list. */
static int next_name(const char **p, char *name, size_t len)
{
    while (**p == ' ')
        (*p)++;
    if (**p == '\0')
        return 0;
    size_t w = strcspn(*p, " ");
    snprintf(name, len, "%.*s", (int)w, *p);
    *p += w;
    return 1;
}

/* The first option of the list names that is given (in the list's
 * order), copied to first; 0 when none is. */
static int first_given(const opt_given *g, const char *names, char *first, size_t len)
{
    while (next_name(&names, first, len))
        if (opt_is_given(g, first))
            return 1;
    return 0;
}

/* Whether every option of the list names is given. */
static int all_given(const opt_given *g, const char *names)
{
    char name[40];
    while (next_name(&names, name, sizeof name))
        if (!opt_is_given(g, name))
            return 0;
    return 1;
}

/* The rule's message with "%s" replaced by name. */
static void rule_error(const char *message, const char *name)
{
    message = _(message); /* xgettext takes OPT_CONFLICTS' and OPT_NEEDS' */
    const char *at = strstr(message, "%s");
    if (at)
        cli_error("%.*s%s%s", (int)(at - message), message, name, at + 2);
    else
        cli_error("%s", message);
}

static int check_rules(const struct opt_rule *rules, const opt_given *g)
{
    char name[40];
    for (const struct opt_rule *r = rules; r && r->kind != OPT_RULE_END; r++) {
        if (r->kind == OPT_RULE_CONFLICTS) {
            if (opt_is_given(g, r->names) && first_given(g, r->others, name, sizeof name)) {
                rule_error(r->message, name);
                return -1;
            }
            continue;
        }
        /* OPT_RULE_NEEDS: each of names, in order */
        for (const char *p = r->names; next_name(&p, name, sizeof name);)
            if (opt_is_given(g, name) && !all_given(g, r->others)) {
                rule_error(r->message, name);
                return -1;
            }
    }
    return 0;
}

/* ---- parsing ---------------------------------------------------------- */

/* opt_parse, and with first not NULL opt_parse_operands. */
static int parse(const struct opt *opts, const struct opt_rule *rules, int argc, char **argv,
                 void *args, opt_given *given, int *first)
{
    struct option longopts[OPT_MAX_ROWS + 1];
    char shortopts[2 * OPT_MAX_ROWS + 2];
    opt_given local;
    size_t n = count_rows(opts);
    int c;

    if (!given)
        given = &local;
    memset(given, 0, sizeof *given);
    given->opts = opts;
    if (n > OPT_MAX_ROWS) {
        cli_error("internal error: more than %d options", OPT_MAX_ROWS);
        return EXIT_RUNTIME;
    }
    getopt_tables(opts, n, longopts, shortopts);
    opterr = 0; /* the messages are ours */
    optind = 0; /* 0: glibc starts afresh, as for a new argv */
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const struct opt *o = row_of(opts, n, c);
        if (!o) {
            option_error(c, opts, n, argc, argv);
            return EXIT_USAGE;
        }
        if (o->type == OPTION_HELP)
            return OPT_HELP_ASKED;
        if (given->given[o - opts]) {
            cli_error("option '--%s' given twice", o->long_name);
            return EXIT_USAGE;
        }
        given->given[o - opts] = 1;
        if (store(o, args, optarg))
            return EXIT_USAGE;
    }
    if (first)
        *first = optind;
    else if (optind < argc) {
        cli_error("unexpected argument '%s' (see attn %s --help)", argv[optind], cli_command());
        return EXIT_USAGE;
    }
    return check_rules(rules, given) ? EXIT_USAGE : EXIT_OK;
}

int opt_parse(const struct opt *opts, const struct opt_rule *rules, int argc, char **argv,
              void *args, opt_given *given)
{
    return parse(opts, rules, argc, argv, args, given, NULL);
}

int opt_parse_operands(const struct opt *opts, const struct opt_rule *rules, int argc,
                       char **argv, void *args, opt_given *given, int *first)
{
    return parse(opts, rules, argc, argv, args, given, first);
}

/* ---- help and --list-options ------------------------------------------ */

/* One line of help text (up to '\n'), "%s" replaced by the choices. */
static void help_line(FILE *f, const struct opt *o, const char *line, size_t len)
{
    const char *at = memchr(line, '%', len);
    if (at && at + 1 < line + len && at[1] == 's' && o->names) {
        fprintf(f, "%.*s%s%.*s", (int)(at - line), line, o->names(),
                (int)(line + len - at - 2), at + 2);
        return;
    }
    fprintf(f, "%.*s", (int)len, line);
}

void opt_usage(FILE *f, const struct opt *opts)
{
    fputs(_("Options:\n"), f);
    for (const struct opt *o = opts; o->type != OPTION_END; o++) {
        int w; /* display columns so far: argh may hold "…" (3 bytes, 1 column) */
        if (o->short_name)
            w = fprintf(f, "  -%c, --%s", o->short_name, o->long_name);
        else
            w = fprintf(f, "      --%s", o->long_name);
        if (o->argh) {
            fprintf(f, " %s", o->argh);
            w += 1 + (int)term_text_columns(o->argh);
        }
        if (w < HELP_COLUMN)
            fprintf(f, "%*s", HELP_COLUMN - w, "");
        else
            fprintf(f, "\n%*s", HELP_COLUMN, "");
        for (const char *line = _(o->help);;) {
            size_t len = strcspn(line, "\n");
            help_line(f, o, line, len);
            fputc('\n', f);
            if (line[len] == '\0')
                break;
            line += len + 1;
            fprintf(f, "%*s", HELP_COLUMN, "");
        }
    }
}

static const char *kind_name(enum opt_type t)
{
    switch (t) {
    case OPTION_HELP: return "help";
    case OPTION_FLAG: return "flag";
    case OPTION_INT: return "int";
    case OPTION_REAL: return "real";
    case OPTION_BYTES: return "bytes";
    case OPTION_TEXT: return "text";
    case OPTION_FILE: return "file";
    case OPTION_DIR: return "dir";
    case OPTION_CHOICE: return "choice";
    case OPTION_CALLBACK: return "value";
    case OPTION_END: break;
    }
    return "?";
}

void opt_list(FILE *f, const struct opt *opts)
{
    for (const struct opt *o = opts; o->type != OPTION_END; o++) {
        fprintf(f, "--%s ", o->long_name);
        if (o->short_name)
            fprintf(f, "-%c ", o->short_name);
        else
            fputs("- ", f);
        /* the argument's name, without blanks ("DELTA | FROM:TO") */
        if (o->argh) {
            for (const char *p = o->argh; *p; p++)
                if (*p != ' ')
                    fputc(*p, f);
            fputc(' ', f);
        } else {
            fputs("- ", f);
        }
        fputs(kind_name(o->type), f);
        if (o->type == OPTION_CHOICE)
            for (const char *const *c = o->choices; *c; c++)
                fprintf(f, " %s", *c);
        if (o->type == OPTION_CALLBACK && o->names)
            for (const char *p = o->names(); *p;) {
                size_t w = strcspn(p, ", ");
                fprintf(f, " %.*s", (int)w, p);
                p += w;
                p += strspn(p, ", ");
            }
        fputc('\n', f);
    }
}

/* ---- checks of a table (for the tests) -------------------------------- */

/* Every name of the space-separated list in opts. */
static int names_known(const struct opt *opts, const char *names, FILE *f)
{
    char name[40];
    int bad = 0;
    while (next_name(&names, name, sizeof name))
        if (!opt_find(opts, name)) {
            fprintf(f, "rule names --%s, which is not in the table\n", name);
            bad = 1;
        }
    return bad;
}

int opt_check_table(const struct opt *opts, const struct opt_rule *rules, FILE *f)
{
    size_t n = count_rows(opts);
    int bad = 0;
    if (n > OPT_MAX_ROWS) {
        fprintf(f, "%zu rows, more than %d\n", n, OPT_MAX_ROWS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct opt *o = &opts[i];
        if (!o->long_name || strlen(o->long_name) > 31 || !o->help) {
            fprintf(f, "row %zu: a long name of 1 to 31 characters and a help are needed\n", i);
            bad = 1;
            continue;
        }
        if (takes_value(o) != (o->argh != NULL) ||
            (o->type == OPTION_CHOICE && !o->choices) ||
            (o->type == OPTION_CALLBACK && !o->callback)) {
            fprintf(f, "--%s: its argument name, choices or callback are missing\n",
                    o->long_name);
            bad = 1;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(opts[j].long_name, o->long_name) == 0) {
                fprintf(f, "--%s is in the table twice\n", o->long_name);
                bad = 1;
            }
            if (o->short_name && opts[j].short_name == o->short_name) {
                fprintf(f, "-%c is in the table twice\n", o->short_name);
                bad = 1;
            }
        }
    }
    for (const struct opt_rule *r = rules; r && r->kind != OPT_RULE_END; r++) {
        bad |= names_known(opts, r->names, f);
        bad |= names_known(opts, r->others, f);
        if (!r->message) {
            fprintf(f, "a rule on --%s has no message\n", r->names);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}
