/* options.h — each option of a command declared once, in a table.
 *
 * A command describes its options as an array of rows, one per option:
 * short and long name, type, the member of the command's argument struct
 * that receives the value, the argument's name and the one-line help (the
 * idea of git's parse-options). From that one table come
 *   - the parsing (getopt_long with attn's rules: abbreviations, an option
 *     given twice refused, a missing or unexpected value, stray operands),
 *   - the range checks and their messages ("expected an integer from 1 to
 *     1000000, got 'abc'"),
 *   - the "Options:" block of `attn CMD --help` (opt_usage),
 *   - `attn CMD --list-options`, which the bash completion reads.
 * Which options may not be given together, or only with another, is data
 * too: an array of rules checked after the options are read.
 *
 * A table for `struct my_args`, in a command's file:
 *
 *   #define OPT_ARGS struct my_args
 *   static const struct opt my_options[] = {
 *       OPT_INT('n', "steps", steps, "N", 1, 1000, "positions (default 60)"),
 *       OPT_CHOICE(0, "task", task, "T", task_names,
 *                  "reverse, previous or apple (default reverse)"),
 *       OPT_FLAG(0, "posenc", posenc, "add the positional encoding"),
 *       OPT_SET(0, "no-posenc", posenc, 0, "do not add it"),
 *       OPT_FILE(0, "weights", weights, "weights to start from"),
 *       OPT_PNG(png, "the loss against the step"),
 *       OPT_HELP(),
 *       OPT_END()
 *   };
 *   static const struct opt_rule my_rules[] = {
 *       OPT_CONFLICTS("posenc", "no-posenc", "--posenc and --no-posenc: give one"),
 *       OPT_NEEDS("cols", "plot", "--%s chooses columns for --plot, which is not given"),
 *       OPT_RULES_END()
 *   };
 *
 * and in its entry point, after setting the defaults in the struct:
 *
 *   opt_given given;
 *   int status = opt_parse(my_options, my_rules, argc, argv, &a, &given);
 *   if (status == OPT_HELP_ASKED) { usage_my(stdout); return EXIT_OK; }
 *   if (status != EXIT_OK) return status;
 *
 * A command is listed in the table of commands.c with its options and
 * rules (declared in commands.h, so not static there): `attn --help`, `attn
 * CMD --list-options`, the completion and the tour find it from that row,
 * and tests/test_options.c checks its table and rules.
 *
 * The member named in a row must have the row's C type (a compile error
 * otherwise): int for flags and choices, long for integers, double for
 * reals, size_t for byte counts, const char * for text, files and folders.
 * Help text may hold several lines separated by '\n'; the Options block
 * indents them under the first. A long name is at most 31 characters.
 */
#ifndef ATTN_OPTIONS_H
#define ATTN_OPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"    /* CLI_DEFAULT_MAX_MEM_TEXT, for OPT_MAX_MEM */
#include "render.h" /* attn_cmap, for OPT_CMAP */

enum opt_type {
    OPTION_END = 0,  /* the row that ends a table */
    OPTION_HELP,     /* -h, --help: opt_parse returns OPT_HELP_ASKED */
    OPTION_FLAG,     /* no value; stores .set (1 for OPT_FLAG) in an int */
    OPTION_INT,      /* an integer in [min, max], stored in a long */
    OPTION_REAL,     /* a finite number in [rmin, rmax], stored in a double */
    OPTION_BYTES,    /* a positive size with K, M, G, T, stored in a size_t */
    OPTION_TEXT,     /* any text, stored as a const char * (argv's) */
    OPTION_FILE,     /* a file name ("-": stdin or stdout where the command says) */
    OPTION_DIR,      /* a folder name, not empty */
    OPTION_CHOICE,   /* one word of .choices; its index stored in an int */
    OPTION_CALLBACK  /* .callback(args, value) parses and stores the value */
};

struct opt {
    enum opt_type type;
    char short_name;                /* 'd' for -d, or 0 */
    const char *long_name;          /* "dim" for --dim */
    size_t offset;                  /* of the member in the command's struct */
    const char *argh;               /* the value's name in help: "D", "FILE" */
    const char *help;               /* lines separated by '\n'; "%s" in it is
                                       replaced by the choices, "a, b, c" */
    long min, max;                  /* OPTION_INT */
    double rmin, rmax;              /* OPTION_REAL */
    int set;                        /* OPTION_FLAG: the value stored */
    const char *const *choices;     /* OPTION_CHOICE: the words, NULL-terminated */
    /* OPTION_CALLBACK: parse value into dest, the member at offset (the
     * whole struct for OPT_CALLBACK); 0, or -1 after printing the error
     * with cli_error */
    int (*callback)(void *dest, const char *value);
    /* OPTION_CALLBACK, optional: the values it takes, "a, b, c" (for
     * --list-options and the help's "%s") */
    const char *(*names)(void);
};

/* ---- rows ------------------------------------------------------------ */

/* The offset of member m of OPT_ARGS (#define'd by the command before its
 * table), checked to be of type T. */
#define OPT_MEMBER_(m, T) _Generic(((OPT_ARGS *)0)->m, T: offsetof(OPT_ARGS, m))

#define OPT_FLAG(s, l, m, h) \
    {.type = OPTION_FLAG, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, int), .help = (h), .set = 1}
/* A flag that stores v, e.g. --no-posenc storing 0 where --posenc stores 1. */
#define OPT_SET(s, l, m, v, h) \
    {.type = OPTION_FLAG, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, int), .help = (h), .set = (v)}
#define OPT_INT(s, l, m, a, lo, hi, h) \
    {.type = OPTION_INT, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, long), .argh = (a), .help = (h), .min = (lo), .max = (hi)}
#define OPT_REAL(s, l, m, a, lo, hi, h) \
    {.type = OPTION_REAL, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, double), .argh = (a), .help = (h), .rmin = (lo), .rmax = (hi)}
#define OPT_BYTES(s, l, m, a, h) \
    {.type = OPTION_BYTES, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, size_t), .argh = (a), .help = (h)}
#define OPT_TEXT(s, l, m, a, h) \
    {.type = OPTION_TEXT, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, const char *), .argh = (a), .help = (h)}
#define OPT_FILE(s, l, m, h) \
    {.type = OPTION_FILE, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, const char *), .argh = "FILE", .help = (h)}
#define OPT_DIR(s, l, m, h) \
    {.type = OPTION_DIR, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, const char *), .argh = "DIR", .help = (h)}
/* words: a NULL-terminated array of the accepted words; the member gets
 * the index of the one given. */
#define OPT_CHOICE(s, l, m, a, words, h) \
    {.type = OPTION_CHOICE, .short_name = (s), .long_name = (l), \
     .offset = OPT_MEMBER_(m, int), .argh = (a), .help = (h), .choices = (words)}
/* fn(args, value): fn gets the whole struct. */
#define OPT_CALLBACK(s, l, a, fn, h) \
    {.type = OPTION_CALLBACK, .short_name = (s), .long_name = (l), .argh = (a), \
     .help = (h), .callback = (fn)}
#define OPT_HELP() \
    {.type = OPTION_HELP, .short_name = 'h', .long_name = "help", .help = N_("show this help")}
#define OPT_END() {.type = OPTION_END}

/* ---- the options several commands share, worded once ------------------ */

#define OPT_SEED_MAX 2147483647L
/* The largest size an option takes: 10^12, beyond any memory (--max-mem
 * refuses far less); where long has 32 bits (the pages' WebAssembly
 * module, SPEC.md §14), its largest value, 2^31 − 1. */
#if LONG_MAX > 1000000000000
#define OPT_SIZE_MAX 1000000000000L
#else
#define OPT_SIZE_MAX LONG_MAX
#endif
#define OPT_SEED(m, h) OPT_INT(0, "seed", m, "N", 0, OPT_SEED_MAX, h)
#define OPT_PNG(m, h) OPT_FILE(0, "png", m, h)
/* --html FILE: one offline page to explore (SPEC §10); h says what it shows */
#define OPT_HTML(m, h) OPT_FILE(0, "html", m, h)
/* h says what the document holds; "- is stdout" is the command's to say */
#define OPT_JSON(m, h) OPT_FILE(0, "json", m, h)
#define OPT_FONT(m) \
    OPT_FILE(0, "font", m, \
             "font (.ttf, .otf, .ttc) for characters the built-in\n" \
             "DejaVu Sans lacks, e.g. 苹果 (default: a CJK font\n" \
             "found on the system; without one, positions are\n" \
             "numbered)")
/* "%s" in its help: CLI_DEFAULT_MAX_MEM_TEXT (opt_max_mem_default) */
#define OPT_MAX_MEM(m) \
    {.type = OPTION_BYTES, .long_name = "max-mem", .offset = OPT_MEMBER_(m, size_t), \
     .argh = "BYTES", .help = N_("refuse runs needing more (default %s)"), \
     .names = opt_max_mem_default}
/* the member is an int: the index in opt_color_names, which is the order
 * of term_color_mode (TERM_COLOR_AUTO, _ALWAYS, _NEVER) */
#define OPT_COLOR(m) \
    OPT_CHOICE(0, "color", m, "WHEN", opt_color_names, \
               "colour on the terminal: auto, always, never\n" \
               "(default auto; NO_COLOR turns auto off)")
/* the member is a const attn_cmap *; h: "colormap: %s (default Reds)",
 * "%s" standing for the colormaps' names */
#define OPT_CMAP(m, h) \
    {.type = OPTION_CALLBACK, .long_name = "cmap", .argh = "NAME", \
     .offset = OPT_MEMBER_(m, const attn_cmap *), \
     .help = (h), \
     .callback = opt_parse_cmap, .names = opt_cmap_names}
#define OPT_THREADS(m) \
    OPT_INT(0, "threads", m, "N", 1, 1024, "cores for the fast loops (default: those free)")

extern const char *const opt_color_names[];       /* auto, always, never */
int opt_parse_cmap(void *dest, const char *value); /* for OPT_CMAP */
const char *opt_cmap_names(void);
const char *opt_max_mem_default(void); /* for OPT_MAX_MEM */

/* --valid-lens LIST (multihead, selfattn, score): "3,2" one length per
 * example, "1,2,3,4;2,2,2,2" one per query (a row per example, rows of one
 * length), or "none". Each length an integer from 0 to OPT_MAX_LEN, at
 * most OPT_MAX_VALID_LENS of them. The member is an opt_lens. */
#define OPT_MAX_VALID_LENS 4096
#define OPT_MAX_LEN 1000000000L
typedef struct opt_lens {
    long v[OPT_MAX_VALID_LENS]; /* row-major: (shape[0],) or (shape[0], shape[1]) */
    size_t ndim;                /* 1 or 2 when lengths were given, else 0 */
    size_t shape[2];            /* shape[1] is 1 when ndim is 1 */
    int none;                   /* "none": no valid_lens */
} opt_lens;
#define OPT_VALID_LENS(m, h) \
    {.type = OPTION_CALLBACK, .long_name = "valid-lens", .argh = "LIST", \
     .offset = OPT_MEMBER_(m, opt_lens), .help = (h), .callback = opt_parse_lens}
int opt_parse_lens(void *dest, const char *value); /* for OPT_VALID_LENS */

/* Whether lens (given: ndim 1 or 2) fit B examples of Nq queries: (B,) or
 * (B, Nq). 0, or -1 after "attn CMD: --valid-lens: expected 2 lengths (one
 * per example of FROM), got 3" (FROM: where B comes from, e.g. the input
 * file; NULL leaves it out). The caller exits with EXIT_USAGE. */
int opt_lens_check(const opt_lens *lens, size_t B, size_t Nq, const char *from);

/* ---- rules between options -------------------------------------------- */

enum opt_rule_kind { OPT_RULE_END = 0, OPT_RULE_CONFLICTS, OPT_RULE_NEEDS };

/* Names are long names without "--", several separated by one space. In a
 * message, "%s" stands for the name of the option refused (without "--"). */
struct opt_rule {
    enum opt_rule_kind kind;
    const char *names;   /* CONFLICTS: the one option; NEEDS: the options */
    const char *others;  /* CONFLICTS: those refused with it; NEEDS: those needed */
    const char *message;
};

/* When `name` is given, the first of `others` given (in the order of
 * others) is refused with message. */
#define OPT_CONFLICTS(name, others, msg) {OPT_RULE_CONFLICTS, (name), (others), (msg)}
/* Each of `names` given (in their order) needs every one of `needs`; the
 * first given without them is refused with message. */
#define OPT_NEEDS(names, needs, msg) {OPT_RULE_NEEDS, (names), (needs), (msg)}
#define OPT_RULES_END() {OPT_RULE_END, NULL, NULL, NULL}

/* ---- parsing ---------------------------------------------------------- */

#define OPT_MAX_ROWS 96

/* Which options were given, by row. */
typedef struct opt_given {
    const struct opt *opts;
    unsigned char given[OPT_MAX_ROWS];
} opt_given;

/* opt_parse returns this when -h or --help is given (the options after it
 * are not read): the caller prints its usage and exits with EXIT_OK. */
#define OPT_HELP_ASKED (-1)

/* Parse the options of argv (argv[0] is the command) into the struct at
 * args, as the rows of opts say, then check rules (NULL: none). Returns
 * EXIT_OK, OPT_HELP_ASKED, or EXIT_USAGE after printing the error, as
 * "attn CMD: --dim: expected an integer from 1 to 1000, got 'x'". given
 * records the options given (it may be NULL). Values are stored as they
 * are read; defaults are the caller's, set in args before. */
int opt_parse(const struct opt *opts, const struct opt_rule *rules, int argc, char **argv,
              void *args, opt_given *given);

/* The same for a command that takes operands (attn translate's
 * sentence): the words that are not options nor their values are left,
 * in their order, in argv[*first … argc) (getopt moves them after the
 * options; "--" ends the options, and what follows it is an operand even
 * when it starts with '-'). The caller checks their number. */
int opt_parse_operands(const struct opt *opts, const struct opt_rule *rules, int argc,
                       char **argv, void *args, opt_given *given, int *first);

/* Whether --long_name was given. A name not in the table is a programming
 * error: it aborts with a message. */
int opt_is_given(const opt_given *given, const char *long_name);

/* The row of --long_name in opts, or NULL. */
const struct opt *opt_find(const struct opt *opts, const char *long_name);

/* The "Options:" block of a command's --help: "Options:" and a line per
 * row (more when its help has several), as
 *   "  -d, --dim D              encoding dimension (default 32)". */
void opt_usage(FILE *f, const struct opt *opts);

/* `attn CMD --list-options`: one line per option, fields separated by one
 * space: "--long -s ARG KIND [CHOICE…]", with "-" for no short name and no
 * argument; KIND is flag, int, real, bytes, text, file, dir, choice or value
 * (parsed by a callback), or help. The choices follow for choice and for a
 * callback that names its values, e.g. "--color - WHEN choice auto always
 * never". */
void opt_list(FILE *f, const struct opt *opts);

/* Check a table and its rules: names unique, short names unique, every
 * name in rules in the table, at most OPT_MAX_ROWS rows. Returns 0, or -1
 * after printing what is wrong to f (for the tests). */
int opt_check_table(const struct opt *opts, const struct opt_rule *rules, FILE *f);

#endif
