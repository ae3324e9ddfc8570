/* seq2seq_bleu.c — d2l's bleu(pred_seq, label_seq, k) on token lists and
 * on sentences (see seq2seq_data.h). */
#include "seq2seq_data.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmath.h"

/* Whether the m tokens at a and at b are the same. */
static int same_gram(const char *const *a, const char *const *b, size_t m)
{
    for (size_t i = 0; i < m; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* How many of pred's m-grams the label has, each label m-gram used at most
 * as often as it occurs there: Σ over distinct pred m-grams of
 * min(count in pred, count in label), what d2l's label_subs counting
 * gives. */
static size_t matched_grams(const char *const *pred, size_t np, const char *const *label,
                            size_t nl, size_t m)
{
    size_t matched = 0;
    for (size_t i = 0; i + m <= np; i++) {
        size_t in_pred = 0, in_label = 0, k;
        for (k = 0; k < i; k++)
            if (same_gram(pred + k, pred + i, m))
                break;
        if (k < i)
            continue; /* counted at its first occurrence */
        for (k = i; k + m <= np; k++)
            in_pred += same_gram(pred + k, pred + i, m);
        for (k = 0; k + m <= nl; k++)
            in_label += same_gram(label + k, pred + i, m);
        matched += in_pred < in_label ? in_pred : in_label;
    }
    return matched;
}

double s2s_bleu(const char *const *pred, size_t len_pred, const char *const *label,
                    size_t len_label, unsigned k)
{
    double score;
    if (len_pred == 0)
        return 0.0; /* d2l would divide by zero */
    /* the brevity penalty: exp(min(0, 1 − len_label / len_pred)) */
    score = 1.0 - (double)len_label / (double)len_pred;
    score = fm_exp(score < 0.0 ? score : 0.0);
    for (size_t m = 1; m <= k; m++) {
        double p;
        if (len_pred < m)
            return 0.0; /* len_pred − m + 1 ≤ 0: no m-gram, p_m = 0 */
        p = (double)matched_grams(pred, len_pred, label, len_label, m) /
            (double)(len_pred - m + 1);
        for (size_t r = 0; r < m; r++)
            p = sqrt(p); /* p^(1/2^m) */
        score *= p;
    }
    return score;
}

/* s split on single spaces as Python's s.split(' '): a copy with the
 * spaces made NULs (*buf) and the tokens (*tok, *n of them). 0 or -1. */
static int split_py(const char *s, char **buf, const char ***tok, size_t *n)
{
    size_t len = strlen(s), k = 1, j = 0;
    for (size_t i = 0; i < len; i++)
        k += s[i] == ' ';
    *tok = NULL;
    if (!(*buf = malloc(len + 1)) || k > SIZE_MAX / sizeof **tok ||
        !(*tok = malloc(k * sizeof **tok))) {
        free(*buf);
        return -1;
    }
    memcpy(*buf, s, len + 1);
    (*tok)[j++] = *buf;
    for (size_t i = 0; i < len; i++)
        if ((*buf)[i] == ' ') {
            (*buf)[i] = '\0';
            (*tok)[j++] = *buf + i + 1;
        }
    *n = k;
    return 0;
}

double s2s_bleu_text(const char *pred, const char *label, unsigned k)
{
    char *pb, *lb;
    const char **pt, **lt;
    size_t np, nl;
    double score;
    if (split_py(pred, &pb, &pt, &np))
        return -1.0;
    if (split_py(label, &lb, &lt, &nl)) {
        free(pb);
        free(pt);
        return -1.0;
    }
    score = s2s_bleu(pt, np, lt, nl, k);
    free(pb);
    free(pt);
    free(lb);
    free(lt);
    return score;
}
