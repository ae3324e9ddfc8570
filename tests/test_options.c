/* test_options.c — the option tables (src/cmd/options.h): each type of
 * value, ranges, an option given twice, abbreviations, the rules between
 * options, the Options block of --help and --list-options, and the check
 * of every command's table. Messages are compared whole, as a user reads
 * them on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "commands.h"
#include "options.h"

struct targs {
    int verbose, posenc, task, color;
    long count;
    double rate;
    size_t mem;
    const char *name, *out, *dir;
    const attn_cmap *cmap;
    long pair_a, pair_b; /* --pair A:B, by callback */
};

static const char *const task_names[] = {"reverse", "previous", "apple", NULL};

static int parse_pair(void *args, const char *s)
{
    struct targs *t = args;
    char *end;
    t->pair_a = strtol(s, &end, 10);
    if (*end != ':') {
        cli_error("--pair: expected A:B, got '%s'", s);
        return -1;
    }
    t->pair_b = strtol(end + 1, &end, 10);
    return 0;
}

#define OPT_ARGS struct targs
static const struct opt topts[] = {
    OPT_FLAG('v', "verbose", verbose, "say more"),
    OPT_FLAG(0, "posenc", posenc, "add the encoding"),
    OPT_SET(0, "no-posenc", posenc, 0, "do not add it"),
    OPT_INT('c', "count", count, "N", 1, 10, "how many (default 3)"),
    OPT_REAL(0, "rate", rate, "R", 0.0, 1.0, "learning rate"),
    OPT_BYTES(0, "mem", mem, "BYTES", "a limit"),
    OPT_TEXT(0, "name", name, "TEXT", "a label\nover two lines"),
    OPT_FILE('o', "output", out, "where"),
    OPT_DIR(0, "dir", dir, "a folder"),
    OPT_CHOICE(0, "task", task, "reverse|previous|apple", task_names, "the task"),
    OPT_CALLBACK(0, "pair", "A:B", parse_pair, "two numbers"),
    OPT_CMAP(cmap, "colormap: %s (default Reds)"),
    OPT_COLOR(color),
    OPT_HELP(),
    OPT_END(),
};

static const struct opt_rule trules[] = {
    OPT_CONFLICTS("posenc", "no-posenc", "--posenc and --no-posenc: give one"),
    OPT_CONFLICTS("verbose", "dir name", "--%s cannot be used with --verbose"),
    OPT_NEEDS("rate mem", "count output", "--%s needs --count and --output"),
    OPT_RULES_END(),
};

/* Parse the words (NULL-terminated, the command first) into *t from the
 * defaults; the status, and what was printed on stderr in err. */
static int parse(struct targs *t, opt_given *g, char *err, size_t errlen, ...)
{
    char *argv[32];
    int argc = 0, status, saved;
    va_list ap;
    FILE *tmp = tmpfile();
    size_t n = 0;

    memset(t, 0, sizeof *t);
    t->count = 3;
    t->posenc = -1;
    va_start(ap, errlen);
    for (char *w; argc < 31 && (w = va_arg(ap, char *)) != NULL;)
        argv[argc++] = w;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stderr);
    saved = dup(2);
    dup2(fileno(tmp), 2);
    status = opt_parse(topts, trules, argc, argv, t, g);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(err, 1, errlen - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return status;
}

#define EXPECT_ERR(msg, ...)                                                        \
    do {                                                                            \
        char err_[512];                                                             \
        struct targs t_;                                                            \
        CHECK_INT(parse(&t_, NULL, err_, sizeof err_, "test", __VA_ARGS__, NULL), \
                  EXIT_USAGE);                                                      \
        if (strcmp(err_, msg) != 0)                                                 \
            fprintf(stderr, "got:  %s want: %s", err_, msg);                       \
        CHECK(strcmp(err_, msg) == 0);                                              \
    } while (0)

static void test_values(void)
{
    struct targs t;
    opt_given g;
    char err[512];
    int rc = parse(&t, &g, err, sizeof err, "test", "--count", "7", "--rate=0.25",
                   "--mem", "2K", "--name", "a b", "-o", "-", "--dir", "d", "--task", "apple",
                   "--pair", "3:-4", "--cmap", "gray", "--color", "never", "--no-posenc", NULL);
    CHECK_INT(rc, EXIT_OK);
    CHECK(err[0] == '\0');
    CHECK_INT(t.verbose, 0);
    CHECK_INT(t.posenc, 0); /* --no-posenc stores 0 over the default -1 */
    CHECK_INT(t.count, 7);
    CHECK_NEAR(t.rate, 0.25, 0, 0);
    CHECK_INT(t.mem, 2048);
    CHECK(t.name && strcmp(t.name, "a b") == 0);
    CHECK(t.out && strcmp(t.out, "-") == 0);
    CHECK(t.dir && strcmp(t.dir, "d") == 0);
    CHECK_INT(t.task, 2);
    CHECK_INT(t.pair_a, 3);
    CHECK_INT(t.pair_b, -4);
    CHECK(t.cmap == cmap_find("gray"));
    CHECK_INT(t.color, 2);
    CHECK(opt_is_given(&g, "count") && opt_is_given(&g, "no-posenc"));
    CHECK(!opt_is_given(&g, "posenc") && !opt_is_given(&g, "help"));

    /* defaults stay when not given; --posenc stores 1 */
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "--posenc", "-v", NULL), EXIT_OK);
    CHECK_INT(t.posenc, 1);
    CHECK_INT(t.verbose, 1);
    CHECK_INT(t.count, 3);
    CHECK(t.name == NULL);

    /* abbreviations, -c7 and -c 7 */
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "--cou", "9", "--ta", "rev", NULL),
              EXIT_USAGE);
    CHECK(strcmp(err, "attn test: --task: expected reverse, previous or apple, got 'rev'\n") == 0);
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "--cou", "9", "--ta", "previous", NULL),
              EXIT_OK);
    CHECK_INT(t.count, 9);
    CHECK_INT(t.task, 1);
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "-c7", NULL), EXIT_OK);
    CHECK_INT(t.count, 7);
    /* the range's ends are in it */
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "-c", "10", "--rate", "0", "-o", "f", NULL),
              EXIT_OK);
    CHECK_INT(t.count, 10);
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "-c", "1", NULL), EXIT_OK);
    CHECK_INT(t.count, 1);

    /* help: asked, whatever follows */
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "-c", "2", "--help", "--frob", NULL),
              OPT_HELP_ASKED);
    CHECK_INT(parse(&t, &g, err, sizeof err, "test", "-h", NULL), OPT_HELP_ASKED);
}

static void test_errors(void)
{
    EXPECT_ERR("attn test: --count: expected an integer from 1 to 10, got '11'\n", "-c", "11");
    EXPECT_ERR("attn test: --count: expected an integer from 1 to 10, got '0'\n", "--count=0");
    EXPECT_ERR("attn test: --count: expected an integer from 1 to 10, got 'x'\n", "-c", "x");
    EXPECT_ERR("attn test: --rate: expected a number from 0 to 1, got '1.5'\n", "--rate", "1.5");
    EXPECT_ERR("attn test: --mem: expected a positive size in bytes with an optional suffix K, "
               "M, G or T, got '0'\n", "--mem", "0");
    EXPECT_ERR("attn test: --dir: expected a folder name, got an empty string\n", "--dir", "");
    EXPECT_ERR("attn test: --color: expected auto, always or never, got 'yes'\n",
               "--color", "yes");
    EXPECT_ERR("attn test: --cmap: unknown colormap 'jet' (known: Reds, Blues, viridis, gray)\n",
               "--cmap", "jet");
    EXPECT_ERR("attn test: --pair: expected A:B, got '3'\n", "--pair", "3");
    EXPECT_ERR("attn test: option '--count' given twice\n", "-c", "2", "--count", "3");
    EXPECT_ERR("attn test: option '--verbose' given twice\n", "--verb", "-v");
    EXPECT_ERR("attn test: option '--verbose' takes no value, got '--verbose=1'\n",
               "--verbose=1");
    EXPECT_ERR("attn test: option '--verbose' takes no value, got '--verb=1'\n", "--verb=1");
    EXPECT_ERR("attn test: option '--count' needs a value\n", "--count");
    EXPECT_ERR("attn test: option '-c' needs a value\n", "-c");
    EXPECT_ERR("attn test: unknown option '--frob' (see attn test --help)\n", "--frob");
    EXPECT_ERR("attn test: unknown option '-x' (see attn test --help)\n", "-x");
    /* ambiguous: --co is --count or --color */
    EXPECT_ERR("attn test: unknown option '--co' (see attn test --help)\n", "--co", "1");
    EXPECT_ERR("attn test: unexpected argument 'extra' (see attn test --help)\n", "extra", "-v");
    /* rules, in their order; the first option of a list that is given */
    EXPECT_ERR("attn test: --posenc and --no-posenc: give one\n", "--no-posenc", "--posenc");
    EXPECT_ERR("attn test: --dir cannot be used with --verbose\n", "--name", "x", "--dir", "d",
               "-v");
    EXPECT_ERR("attn test: --mem needs --count and --output\n", "--mem", "1K", "-c", "2");
    EXPECT_ERR("attn test: --rate needs --count and --output\n", "--mem", "1K", "--rate", "0",
               "-o", "f");

    struct targs t;
    char err[512];
    CHECK_INT(parse(&t, NULL, err, sizeof err, "test", "--rate", "0", "--mem", "1K", "-o", "f",
                    "-c", "2", NULL), EXIT_OK);
}

static char *printed(void (*print)(FILE *, const struct opt *), const struct opt *opts)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    print(f, opts);
    fclose(f);
    return text;
}

static void test_usage_and_list(void)
{
    static const char want_usage[] =
        "Options:\n"
        "  -v, --verbose            say more\n"
        "      --posenc             add the encoding\n"
        "      --no-posenc          do not add it\n"
        "  -c, --count N            how many (default 3)\n"
        "      --rate R             learning rate\n"
        "      --mem BYTES          a limit\n"
        "      --name TEXT          a label\n"
        "                           over two lines\n"
        "  -o, --output FILE        where\n"
        "      --dir DIR            a folder\n"
        "      --task reverse|previous|apple\n"
        "                           the task\n"
        "      --pair A:B           two numbers\n"
        "      --cmap NAME          colormap: Reds, Blues, viridis, gray (default Reds)\n"
        "      --color WHEN         colour on the terminal: auto, always, never\n"
        "                           (default auto; NO_COLOR turns auto off)\n"
        "  -h, --help               show this help\n";
    static const char want_list[] =
        "--verbose -v - flag\n"
        "--posenc - - flag\n"
        "--no-posenc - - flag\n"
        "--count -c N int\n"
        "--rate - R real\n"
        "--mem - BYTES bytes\n"
        "--name - TEXT text\n"
        "--output -o FILE file\n"
        "--dir - DIR dir\n"
        "--task - reverse|previous|apple choice reverse previous apple\n"
        "--pair - A:B value\n"
        "--cmap - NAME value Reds Blues viridis gray\n"
        "--color - WHEN choice auto always never\n"
        "--help -h - help\n";
    char *u = printed(opt_usage, topts), *l = printed(opt_list, topts);
    CHECK(u && strcmp(u, want_usage) == 0);
    CHECK(l && strcmp(l, want_list) == 0);
    if (u && strcmp(u, want_usage) != 0)
        fprintf(stderr, "got:\n%s", u);
    if (l && strcmp(l, want_list) != 0)
        fprintf(stderr, "got:\n%s", l);
    free(u);
    free(l);
}

static void test_tables(void)
{
    static const struct opt bad[] = {
        OPT_FLAG('v', "verbose", verbose, "say more"),
        OPT_FLAG('v', "verbose", posenc, "twice"),
        OPT_END(),
    };
    static const struct opt_rule bad_rules[] = {
        OPT_NEEDS("verbose", "nothere", "--%s"),
        OPT_RULES_END(),
    };
    FILE *null = fopen("/dev/null", "w");
    CHECK(null != NULL);
    if (!null)
        return;
    CHECK_INT(opt_check_table(topts, trules, null), 0);
    CHECK_INT(opt_check_table(bad, NULL, null), -1);
    CHECK_INT(opt_check_table(topts, bad_rules, null), -1);
    /* every command's table */
    for (size_t i = 0; i < attn_ncommands; i++) {
        if (!attn_commands[i].options)
            continue;
        int ok = opt_check_table(attn_commands[i].options, attn_commands[i].rules, stderr) == 0;
        if (!ok)
            fprintf(stderr, "the table of %s\n", attn_commands[i].name);
        CHECK(ok);
    }
    CHECK(opt_find(topts, "count") == &topts[3]);
    CHECK(opt_find(topts, "cou") == NULL);
    fclose(null);
}

int main(void)
{
    cli_set_command("test");
    test_values();
    test_errors();
    test_usage_and_list();
    test_tables();
    return check_summary("options");
}
