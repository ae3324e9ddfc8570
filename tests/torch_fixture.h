/* torch_fixture.h — reading PyTorch's reference files and comparing with
 * them, shared by the encoder–decoder tests (test_seq2seq.c,
 * test_bahdanau.c): a fixture's nested arrays flattened, and the worst
 * error of each quantity kept over every fixture and reported at the end.
 * Include after check.h (check_count, check_failed).
 */
#ifndef ATTN_TORCH_FIXTURE_H
#define ATTN_TORCH_FIXTURE_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "s2s_model_file.h"

static inline const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* The numbers of a nested array, flattened in row-major order into out
 * (up to cap); returns how many there are. */
static inline size_t flatten(const cJSON *node, double *out, size_t cap, size_t at)
{
    if (cJSON_IsNumber(node)) {
        if (at < cap)
            out[at] = node->valuedouble;
        return at + 1;
    }
    for (const cJSON *c = node ? node->child : NULL; c; c = c->next)
        at = flatten(c, out, cap, at);
    return at;
}

/* The numbers of node as a new double array; *n their number. */
static inline double *numbers(const cJSON *node, size_t *n)
{
    size_t count = flatten(node, NULL, 0, 0);
    double *v = malloc((count ? count : 1) * sizeof *v);
    if (v)
        flatten(node, v, count, 0);
    *n = count;
    return v;
}

static inline int *ints(const cJSON *node, size_t *n)
{
    double *v = numbers(node, n);
    int *r = malloc((*n ? *n : 1) * sizeof *r);
    for (size_t i = 0; v && r && i < *n; i++)
        r[i] = (int)v[i];
    free(v);
    return r;
}

/* The worst error of a quantity over every fixture: |got − want| and
 * |got − want| / (|want| + floor), reported at the end. */
typedef struct worst {
    const char *what;
    double abs, rel, floor;
} worst_err;

static inline void note(worst_err *w, double got, double want)
{
    double a = fabs(got - want), r = a / (fabs(want) + w->floor);
    w->abs = a > w->abs ? a : w->abs;
    w->rel = r > w->rel ? r : w->rel;
}

static inline void report(const worst_err *w)
{
    printf("  worst %-42s |attn − torch| %.2e, relative %.2e\n", w->what, w->abs, w->rel);
}

/* got (n) against want (n): every |got − want| <= atol + rtol·|want|;
 * the misses, printed (at most 3) under label. */
static inline size_t compare(const char *file, const char *label, const double *got,
                             const double *want, size_t n, double atol, double rtol,
                             worst_err *w)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (w)
            note(w, got[i], want[i]);
        if (!(d <= atol + rtol * fabs(want[i])) && bad++ < 3)
            fprintf(stderr, "%s: %s[%zu] = %.12g, torch %.12g (diff %.3g)\n", file, label, i,
                    got[i], want[i], d);
    }
    check_count++;
    if (bad)
        check_failed++;
    return bad;
}

/* `test_… write-model DIR`: m saved as DIR/model.json with the given
 * vocabularies and num_steps (then freed), for the generator's --load
 * check. 0, or 1 with the reason on stderr. */
static inline int save_model_file(const char *dir, s2s_model *m, const char *const *src_vocab,
                                  const char *const *tgt_vocab, size_t num_steps)
{
    char path[512], err[512];
    int rc = 0;
    snprintf(path, sizeof path, "%s/model.json", dir);
    if (s2s_model_save(path, m, src_vocab, tgt_vocab, num_steps, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        rc = 1;
    } else {
        printf("wrote %s (%zu parameters)\n", path, m->total);
    }
    s2s_free(m);
    return rc;
}

#endif
