/* encoder_task.c — sets of sequences and the built-in tasks (encoder_task.h). */
#include "encoder_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "i18n.h"

int train_set_alloc(train_set *s, size_t n, size_t T, char *err, size_t errlen)
{
    size_t nt;
    memset(s, 0, sizeof *s);
    if (size_mul(n, T, &nt) || nt > ((size_t)-1) / sizeof(long)) {
        snprintf(err, errlen, _("%zu sequences of %zu tokens are too many"), n, T);
        return -1;
    }
    s->tokens = calloc(nt ? nt : 1, sizeof *s->tokens);
    s->targets = malloc((nt ? nt : 1) * sizeof *s->targets);
    s->lens = malloc((n ? n : 1) * sizeof *s->lens);
    if (!s->tokens || !s->targets || !s->lens) {
        train_set_free(s);
        snprintf(err, errlen, _("out of memory for %zu sequences of %zu tokens"), n, T);
        return -1;
    }
    for (size_t i = 0; i < nt; i++)
        s->targets[i] = -1;
    for (size_t i = 0; i < n; i++)
        s->lens[i] = (long)T;
    s->n = n;
    s->T = T;
    return 0;
}

void train_set_free(train_set *s)
{
    FREE_EACH(s->tokens, s->lens, s->targets);
    memset(s, 0, sizeof *s);
}

void train_strings_free(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

void train_task_free(train_task *task)
{
    train_strings_free(task->vocab, task->V);
    if (task->classes != task->vocab)
        train_strings_free(task->classes, task->C);
    train_set_free(&task->train);
    train_set_free(&task->heldout);
    train_set_free(&task->eval);
    memset(task, 0, sizeof *task);
}

long train_task_token(const train_task *task, const char *token)
{
    for (size_t i = 0; i < task->V; i++)
        if (strcmp(task->vocab[i], token) == 0)
            return (long)i;
    return -1;
}

/* An induction sequence into tok, tgt (T,): f filler tokens, a segment of
 * s, the segment again; all f + s tokens distinct: a partial Fisher–Yates
 * shuffle of the `digits` tokens 1 … digits. */
static void draw_induction(const train_task *task, int *tok, int *tgt, size_t T, rng *r)
{
    const size_t lo = T / 4, hi = T / 2;
    const size_t s = lo + (size_t)(rng_next(r) % (hi - lo + 1)), f = T - 2 * s;
    int avail[TRAIN_INDUCTION_MAX_VOCAB];
    size_t k;
    for (k = 0; k < task->digits; k++)
        avail[k] = (int)k + 1;
    /* the filler and A: the first f + s of a shuffle */
    for (k = 0; k < f + s; k++) {
        size_t j = k + (size_t)(rng_next(r) % (task->digits - k));
        int t = avail[k];
        avail[k] = avail[j];
        avail[j] = t;
        tok[k] = avail[k];
    }
    for (k = 0; k < s; k++)
        tok[f + s + k] = tok[f + k]; /* the second copy of A */
    for (k = 0; k < T; k++)
        /* the second copy but its last position: the next token */
        tgt[k] = k >= f + s && k + 1 < T ? tok[k + 1] : -1;
}

void train_task_draw(const train_task *task, train_set *s, size_t i, rng *r)
{
    const size_t T = s->T;
    int *tok = s->tokens + i * T, *tgt = s->targets + i * T;
    s->lens[i] = (long)T;
    if (task->kind == TASK_INDUCTION) {
        draw_induction(task, tok, tgt, T, r);
        return;
    }
    for (size_t t = 0; t < T; t++)
        /* digit k is vocabulary id 1 + k ("<pad>" is 0) */
        tok[t] = 1 + (int)(rng_next(r) % task->digits);
    for (size_t t = 0; t < T; t++)
        tgt[t] = task->kind == TASK_REVERSE ? tok[T - 1 - t]       /* reverse: x[n−1−i] */
                 : t > 0                    ? tok[t - 1]           /* previous: x[i−1] */
                                            : -1;                  /* nothing before 0 */
}

/* The name of induction token k (0-based): a … z, A … Z, then two letters. */
static void letter_name(char *buf, size_t len, size_t k)
{
    static const char L[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (k < 52)
        snprintf(buf, len, "%c", L[k]);
    else
        snprintf(buf, len, "%c%c", L[(k - 52) / 26 % 26], L[(k - 52) % 26]);
}

int train_task_builtin(train_task *task, train_kind kind, size_t length, size_t digits,
                       size_t heldout_n, size_t eval_n, unsigned long long seed, char *err,
                       size_t errlen)
{
    rng r;
    memset(task, 0, sizeof *task);
    task->kind = kind;
    task->label_at = -1;
    task->length = length;
    task->digits = digits;
    if (length < 1 || length > TRAIN_MAX_LEN || digits < 1 || digits >= TRAIN_MAX_VOCAB) {
        snprintf(err, errlen, _("length %zu or vocabulary %zu out of range"), length, digits);
        return -1;
    }
    if (kind == TASK_INDUCTION && length < TRAIN_INDUCTION_MIN_LEN) {
        snprintf(err, errlen, _("length %zu is too short for two copies of a segment of at least "
                 "2 tokens (at least %d)"), length, TRAIN_INDUCTION_MIN_LEN);
        return -1;
    }
    if (kind == TASK_INDUCTION && (digits < length || digits > TRAIN_INDUCTION_MAX_VOCAB)) {
        snprintf(err, errlen, _("a vocabulary of %zu tokens for sequences of %zu distinct tokens "
                 "(from %zu to %d)"), digits, length, length, TRAIN_INDUCTION_MAX_VOCAB);
        return -1;
    }
    task->V = digits + 1;
    task->vocab = calloc(task->V, sizeof *task->vocab);
    if (!task->vocab)
        goto oom;
    for (size_t i = 0; i < task->V; i++) {
        char buf[32];
        if (i == 0)
            snprintf(buf, sizeof buf, "<pad>");
        else if (kind == TASK_INDUCTION)
            letter_name(buf, sizeof buf, i - 1);
        else
            snprintf(buf, sizeof buf, "%zu", i - 1);
        if (!(task->vocab[i] = malloc(strlen(buf) + 1)))
            goto oom;
        memcpy(task->vocab[i], buf, strlen(buf) + 1);
    }
    /* the classes are the vocabulary: a target is a token */
    task->classes = task->vocab;
    task->C = task->V;
    if (train_set_alloc(&task->heldout, heldout_n, length, err, errlen) ||
        train_set_alloc(&task->eval, eval_n, length, err, errlen)) {
        train_task_free(task);
        return -1;
    }
    /* streams of their own: seed + odd constants */
    rng_seed(&r, seed ^ 0x68656c646f7574ULL); /* "heldout" */
    for (size_t i = 0; i < heldout_n; i++)
        train_task_draw(task, &task->heldout, i, &r);
    rng_seed(&r, seed ^ 0x6576616c736574ULL); /* "evalset" */
    for (size_t i = 0; i < eval_n; i++)
        train_task_draw(task, &task->eval, i, &r);
    return 0;
oom:
    train_task_free(task);
    snprintf(err, errlen, "%s", _("out of memory for the vocabulary"));
    return -1;
}

int train_task_probe(const train_task *task, long class_id, const int **tokens, size_t *len)
{
    const train_set *sets[3] = {&task->heldout, &task->train, &task->eval};
    for (size_t k = 0; k < 3; k++) {
        const train_set *s = sets[k];
        for (size_t i = 0; i < s->n; i++) {
            int match = class_id < 0 || task->label_at < 0;
            for (size_t t = 0; !match && t < s->T; t++)
                match = s->targets[i * s->T + t] == class_id;
            if (match) {
                *tokens = s->tokens + i * s->T;
                *len = (size_t)s->lens[i];
                return 0;
            }
        }
    }
    return -1;
}
