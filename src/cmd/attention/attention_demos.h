/* attention_demos.h — two things the chapter says about self-attention only
 * in words, shown with numbers: `attn selfattn --permute` (order
 * blindness) and `attn selfattn --scale-sweep` (why scores are divided by
 * √d). The computations are in src/nn/attention/properties.h (which explains both);
 * this module parses the demos' options, checks them, prints, and writes
 * the JSON and the figures.
 */
#ifndef ATTN_ATTENTION_DEMOS_H
#define ATTN_ATTENTION_DEMOS_H

#include <stddef.h>

#include "problem.h"
#include "properties.h"
#include "render.h"
#include "tensor.h"

/* ---- order blindness (--permute) ----------------------------------- */

/* perm (n,) ← the list s ("3,0,2,1"), which must hold each of 0 … n−1
 * once. 0, or -1 with a message starting "--permutation: " in err. */
int demo_parse_permutation(const char *s, size_t *perm, size_t n, char *err, size_t errlen);

/* What `attn selfattn --permute` was asked. */
typedef struct demo_permute_opts {
    const char *permutation; /* --permutation, or NULL: random from seed */
    unsigned long long seed;
    int posenc, naive;
    const char *inputs;      /* what X is, for the header ("standard normal") */
    int fill_default;        /* --fill random was chosen by --permute */
    const char *lens_origin; /* where pr's valid_lens came from, for errors */
    const char *png, *json;  /* outputs, or NULL */
    const char *html;        /* --html FILE, or NULL (checked by the caller) */
    const attn_cmap *cmap;
    const char *font;        /* --font FILE for the figure, or NULL */
    size_t max_mem;
    int argc;                /* the command line, for the page */
    char **argv;
} demo_permute_opts;

/* The demo on pr (loaded or made by the caller, positional encoding not
 * yet added): checks π and valid_lens (usage errors), --max-mem, runs,
 * prints the result (unless the JSON goes to stdout), writes --json,
 * --png and --html. Returns the exit status. */
int demo_permute_command(const problem *pr, const demo_permute_opts *o);

/* ---- why divide by √d (--scale-sweep) ------------------------------ */

/* "1:1024" → from <= to, powers of two from 1 to 2^20. 0, or -1 after
 * printing the error naming --dims. */
int demo_parse_dims(const char *s, long *from, long *to);

/* What `attn selfattn --scale-sweep` was asked. */
typedef struct demo_sweep_opts {
    size_t d_from, d_to;     /* powers of two */
    size_t samples, keys;    /* S, n */
    unsigned long long seed;
    const char *png, *json;  /* outputs, or NULL */
    const char *html;        /* --html: a page of the two charts, or NULL */
    const char *font;        /* --font FILE for the figure, or NULL */
    size_t max_mem;
    int argc;                /* the command line, for the page */
    char **argv;
} demo_sweep_opts;

/* The sweep: --max-mem, the table and its explanation (unless the JSON
 * goes to stdout), --json, --png and --html. Returns the exit status. */
int demo_sweep_command(const demo_sweep_opts *o);

#endif
