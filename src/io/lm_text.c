/* lm_text.c — the text of attn train --task lm (see lm_text.h). */
#include "lm_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "utf8.h"
#include "i18n.h"

static int out_of_memory(char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", _("out of memory for the text"));
    return -1;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* t->vocab: the sorted distinct code points of t->text; t->ids: each
 * character's index in it (a binary search). */
static int build_vocab(lm_text *t)
{
    uint32_t *sorted;
    size_t bytes, V = 0;
    if (size_mul(t->n, sizeof *sorted, &bytes) || !(sorted = malloc(bytes ? bytes : 1)))
        return -1;
    memcpy(sorted, t->text, bytes);
    qsort(sorted, t->n, sizeof *sorted, cmp_u32);
    for (size_t i = 0; i < t->n; i++)
        if (V == 0 || sorted[V - 1] != sorted[i])
            sorted[V++] = sorted[i];
    t->vocab = sorted;
    t->V = V;
    if (!(t->ids = malloc(t->n ? t->n * sizeof *t->ids : 1)))
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t lo = 0, hi = V; /* vocab[lo … hi) holds text[i] */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (sorted[mid] <= t->text[i])
                lo = mid;
            else
                hi = mid;
        }
        t->ids[i] = (int)lo;
    }
    return 0;
}

int lm_text_from_bytes(lm_text *t, const char *bytes, size_t len, const char *name, char *err,
                       size_t errlen)
{
    char *buf;
    const char *s;
    memset(t, 0, sizeof *t);
    /* utf8_next reads a NUL-terminated string: a copy with its NUL */
    if (len >= LM_MAX_BYTES + 1 || !(buf = malloc(len + 1)))
        return out_of_memory(err, errlen);
    memcpy(buf, bytes, len);
    buf[len] = '\0';
    /* at most one code point a byte */
    if (!(t->text = malloc((len ? len : 1) * sizeof *t->text))) {
        free(buf);
        return out_of_memory(err, errlen);
    }
    s = buf;
    while ((size_t)(s - buf) < len) {
        const size_t at = (size_t)(s - buf);
        uint32_t cp = utf8_next(&s);
        if (cp == UTF8_INVALID || cp == 0) { /* 0: a NUL byte inside the file */
            snprintf(err, errlen, _("%s: invalid UTF-8 at byte offset %zu"), name, at);
            free(buf);
            lm_text_free(t);
            return -1;
        }
        t->text[t->n++] = cp;
    }
    free(buf);
    if (build_vocab(t)) {
        lm_text_free(t);
        return out_of_memory(err, errlen);
    }
    return 0;
}

int lm_text_read(lm_text *t, const char *path, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    const size_t most = LM_MAX_BYTES + 1; /* one byte more tells a larger text */
    size_t cap = 0, n = 0, got;
    char *buf = NULL;
    int rc;
    memset(t, 0, sizeof *t);
    if (!f) {
        snprintf(err, errlen, _("%s: cannot read: %s"), path, strerror(errno));
        return -1;
    }
    /* a buffer grown as the text comes (64 KiB, doubled up to `most`),
     * not 16 MiB for every text */
    for (;;) {
        if (n == cap) {
            const size_t want = cap == 0 ? (size_t)64 << 10 : cap * 2 < most ? cap * 2 : most;
            char *grown;
            if (cap == most)
                break;
            if (!(grown = realloc(buf, want))) {
                free(buf);
                if (f != stdin)
                    fclose(f);
                return out_of_memory(err, errlen);
            }
            buf = grown;
            cap = want;
        }
        if ((got = fread(buf + n, 1, cap - n, f)) == 0)
            break;
        n += got;
    }
    rc = ferror(f);
    if (f != stdin)
        fclose(f);
    if (rc) {
        snprintf(err, errlen, _("%s: cannot read: %s"), path, strerror(errno ? errno : EIO));
        free(buf);
        return -1;
    }
    if (n > LM_MAX_BYTES) {
        snprintf(err, errlen, _("%s: larger than %zu MiB"), path, LM_MAX_BYTES >> 20);
        free(buf);
        return -1;
    }
    rc = lm_text_from_bytes(t, buf, n, path, err, errlen);
    free(buf);
    return rc;
}

void lm_text_free(lm_text *t)
{
    free(t->text);
    free(t->vocab);
    free(t->ids);
    memset(t, 0, sizeof *t);
}

size_t lm_train_chars(size_t n)
{
    return n - n / 10;
}

/* Window w of s: the L characters from start, targets from start + 1,
 * kept at positions from `from` on (earlier ones −1). Tokens are
 * character + 1 (<pad> is 0). */
static void put_window(train_set *s, size_t w, const int *ids, size_t start, size_t from)
{
    const size_t L = s->T;
    for (size_t t = 0; t < L; t++) {
        s->tokens[w * L + t] = ids[start + t] + 1;
        s->targets[w * L + t] = t >= from ? ids[start + t + 1] : -1;
    }
    s->lens[w] = (long)L;
}

int lm_cover(train_set *s, const int *ids, size_t n, size_t L, size_t max_windows, char *err,
             size_t errlen)
{
    const size_t full = (n - 1) / L, rest = (n - 1) % L; /* whole windows, targets left */
    size_t nw = full + (rest > 0);
    if (nw > max_windows)
        nw = max_windows;
    if (train_set_alloc(s, nw, L, err, errlen))
        return -1;
    for (size_t w = 0; w < nw; w++) {
        if (w < full) /* predicts characters wL+1 … wL+L */
            put_window(s, w, ids, w * L, 0);
        else /* the last L targets of the text; the first L − rest predicted already */
            put_window(s, w, ids, n - 1 - L, L - rest);
    }
    return 0;
}

/* The training windows over ids (n,): every start 0 … n−L−1, or spaced
 * by the smallest stride that keeps them within LM_MAX_WINDOWS. */
static int train_windows(train_set *s, const int *ids, size_t n, size_t L, char *err,
                         size_t errlen)
{
    const size_t starts = n - L; /* windows need L + 1 characters */
    const size_t stride = ceil_div(starts, LM_MAX_WINDOWS);
    const size_t nw = ceil_div(starts, stride);
    if (train_set_alloc(s, nw, L, err, errlen))
        return -1;
    for (size_t w = 0; w < nw; w++)
        put_window(s, w, ids, w * stride, 0);
    return 0;
}

int lm_task_bytes(size_t n, size_t L, size_t *bytes)
{
    const size_t ntrain = lm_train_chars(n);
    size_t windows, positions;
    if (ntrain <= L || L == 0) { /* refused by lm_task_build: nothing allocated */
        *bytes = 0;
        return 0;
    }
    /* training windows, and the two covers (at most one window per L
     * characters, and one more each) */
    windows = ceil_div(ntrain - L, ceil_div(ntrain - L, LM_MAX_WINDOWS)) + n / L + 2;
    if (size_mul(windows, L, &positions) || size_mul(positions, sizeof(int) * 2 + 1, bytes))
        return -1;
    return 0;
}

/* The vocabulary "<pad>" and the characters, the classes the characters. */
static int task_strings(train_task *task, const lm_text *t)
{
    char buf[5];
    if (!(task->vocab = calloc(t->V + 1, sizeof *task->vocab)) ||
        !(task->classes = calloc(t->V, sizeof *task->classes)))
        return -1;
    task->V = t->V + 1;
    task->C = t->V;
    if (!(task->vocab[0] = strdup("<pad>")))
        return -1;
    for (size_t i = 0; i < t->V; i++) {
        utf8_write(t->vocab[i], buf);
        if (!(task->vocab[i + 1] = strdup(buf)) || !(task->classes[i] = strdup(buf)))
            return -1;
    }
    return 0;
}

int lm_task_build(train_task *task, const lm_text *t, size_t L, const char *name, char *err,
                  size_t errlen)
{
    const size_t ntrain = lm_train_chars(t->n), nheld = t->n - ntrain;
    memset(task, 0, sizeof *task);
    task->kind = TASK_DATA;
    task->label_at = -1;
    if (t->n == 0) {
        snprintf(err, errlen, _("%s: empty text"), name);
        return -1;
    }
    if (L == 0) { /* a window of no character predicts nothing */
        snprintf(err, errlen, _("%s: --length 0: a window needs at least one character"), name);
        return -1;
    }
    if (nheld < L + 1) {
        snprintf(err, errlen,
                 _("%s: %zu characters: too short for --length %zu (the training and the "
                 "held-out part (the last 10%%) each need %zu)"),
                 name, t->n, L, L + 1);
        return -1;
    }
    if (task_strings(task, t)) {
        train_task_free(task);
        return out_of_memory(err, errlen);
    }
    task->length = L;
    if (train_windows(&task->train, t->ids, ntrain, L, err, errlen) ||
        lm_cover(&task->heldout, t->ids + ntrain, nheld, L, (size_t)-1, err, errlen) ||
        lm_cover(&task->eval, t->ids, ntrain, L, LM_MAX_EVAL_WINDOWS, err, errlen)) {
        train_task_free(task);
        return -1;
    }
    return 0;
}
