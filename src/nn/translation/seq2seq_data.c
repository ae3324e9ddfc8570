/* seq2seq_data.c — sentence pairs, d2l's Vocab and build_array_nmt, and
 * greedy decoding's bookkeeping: ids to words and the alignment count
 * (see seq2seq_data.h for the dimensions N, T, V, H, Tq, S); BLEU is in
 * seq2seq_bleu.c. */
#include "seq2seq_data.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "checked.h"
#include "i18n.h"

static const char *const reserved[S2S_RESERVED] = {"<unk>", "<pad>", "<bos>", "<eos>"};

/* ---- pairs ----------------------------------------------------------------- */

void s2s_pairs_free(s2s_pairs *p)
{
    FREE_EACH(p->src_start, p->tgt_start, p->src_tok, p->tgt_tok, p->align, p->text);
    memset(p, 0, sizeof *p);
}

void s2s_corpus_free(s2s_corpus *c)
{
    s2s_pairs_free(&c->train);
    s2s_pairs_free(&c->heldout);
}

const char *const *s2s_src(const s2s_pairs *p, size_t i, size_t *n)
{
    *n = p->src_start[i + 1] - p->src_start[i];
    return p->src_tok + p->src_start[i];
}

const char *const *s2s_tgt(const s2s_pairs *p, size_t i, size_t *n)
{
    *n = p->tgt_start[i + 1] - p->tgt_start[i];
    return p->tgt_tok + p->tgt_start[i];
}

const long *s2s_align(const s2s_pairs *p, size_t i)
{
    return p->align ? p->align + p->tgt_start[i] : NULL;
}

char *s2s_join(const char *const *tok, size_t n)
{
    size_t len = 1, at = 0;
    char *s;
    for (size_t i = 0; i < n; i++)
        if (size_add(len, strlen(tok[i]) + (i > 0), &len))
            return NULL;
    if (!(s = malloc(len)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(tok[i]);
        if (i > 0)
            s[at++] = ' ';
        memcpy(s + at, tok[i], k);
        at += k;
    }
    s[at] = '\0';
    return s;
}

/* ---- building pairs ---------------------------------------------------------- */

void s2s_builder_init(s2s_builder *b) { memset(b, 0, sizeof *b); }

void s2s_builder_free(s2s_builder *b)
{
    free(b->text);
    for (int s = 0; s < 2; s++) {
        free(b->off[s]);
        free(b->start[s]);
    }
    free(b->align);
    memset(b, 0, sizeof *b);
}

/* Room for `more` items beyond `have` in *buf of *cap items of `size`
 * bytes: doubled as needed, every size checked. 0 or -1. */
static int grow(void **buf, size_t *cap, size_t have, size_t more, size_t size)
{
    size_t want, c = *cap ? *cap : 16, bytes;
    void *nb;
    if (size_add(have, more, &want))
        return -1;
    if (want <= *cap)
        return 0;
    while (c < want)
        if (size_mul(c, 2, &c))
            return -1;
    if (size_mul(c, size, &bytes) || !(nb = realloc(*buf, bytes)))
        return -1;
    *buf = nb;
    *cap = c;
    return 0;
}

/* The pair arrays' first entry (start[s][0] = 0), made on first use. */
static int builder_ready(s2s_builder *b)
{
    for (int s = 0; s < 2; s++) {
        if (b->start[s])
            continue;
        if (grow((void **)&b->start[s], &b->cap_start[s], 0, 16, sizeof(size_t)))
            return -1;
        b->start[s][0] = 0;
    }
    return 0;
}

int s2s_builder_token(s2s_builder *b, int side, const char *s, size_t len)
{
    size_t bytes;
    if (builder_ready(b) || size_add(len, 1, &bytes) ||
        grow((void **)&b->text, &b->text_cap, b->text_len, bytes, 1) ||
        grow((void **)&b->off[side], &b->cap_tok[side], b->ntok[side], 1, sizeof(size_t)))
        return -1;
    memcpy(b->text + b->text_len, s, len);
    b->text[b->text_len + len] = '\0';
    b->off[side][b->ntok[side]++] = b->text_len;
    b->text_len += bytes;
    return 0;
}

int s2s_builder_split_d2l(s2s_builder *b, int side, const char *s, size_t len,
                              size_t *ntok)
{
    size_t from = 0;
    *ntok = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || s[i] == ' ') {
            /* every space ends a token, empty or not: Python's split(' ') */
            if (s2s_builder_token(b, side, s + from, i - from))
                return -1;
            (*ntok)++;
            from = i + 1;
        }
    return 0;
}

int s2s_builder_split_words(s2s_builder *b, int side, const char *s, size_t len,
                                size_t *ntok)
{
    size_t i = 0;
    *ntok = 0;
    while (i < len) {
        size_t from;
        while (i < len && s[i] == ' ')
            i++;
        from = i;
        while (i < len && s[i] != ' ')
            i++;
        if (i > from) {
            if (s2s_builder_token(b, side, s + from, i - from))
                return -1;
            (*ntok)++;
        }
    }
    return 0;
}

/* The ending pair's alignment: once any pair has one, b->align covers
 * every target token, −1 for the pairs (or tokens) without. */
static int builder_align(s2s_builder *b, const long *align)
{
    size_t first = b->start[1][b->n], had = b->align ? first : 0;
    if (!align && !b->align)
        return 0;
    if (grow((void **)&b->align, &b->cap_align, had, b->ntok[1] - had, sizeof(long)))
        return -1;
    for (size_t t = had; t < first; t++)
        b->align[t] = -1; /* the pairs before the first with an alignment */
    for (size_t t = first; t < b->ntok[1]; t++)
        b->align[t] = align ? align[t - first] : -1;
    return 0;
}

int s2s_builder_pair(s2s_builder *b, const long *align)
{
    if (builder_ready(b) || builder_align(b, align) ||
        grow((void **)&b->start[0], &b->cap_start[0], b->n + 1, 1, sizeof(size_t)) ||
        grow((void **)&b->start[1], &b->cap_start[1], b->n + 1, 1, sizeof(size_t)))
        return -1;
    b->n++;
    b->start[0][b->n] = b->ntok[0];
    b->start[1][b->n] = b->ntok[1];
    b->pair_text = b->text_len;
    return 0;
}

void s2s_builder_drop(s2s_builder *b)
{
    if (!b->start[0])
        return; /* nothing was added */
    b->ntok[0] = b->start[0][b->n];
    b->ntok[1] = b->start[1][b->n];
    b->text_len = b->pair_text;
}

int s2s_builder_finish(s2s_builder *b, s2s_pairs *p)
{
    memset(p, 0, sizeof *p);
    s2s_builder_drop(b); /* tokens of a pair never ended */
    if (builder_ready(b) ||
        !(p->src_tok = malloc((b->ntok[0] ? b->ntok[0] : 1) * sizeof *p->src_tok)) ||
        !(p->tgt_tok = malloc((b->ntok[1] ? b->ntok[1] : 1) * sizeof *p->tgt_tok)) ||
        (!b->text && !(b->text = malloc(1)))) {
        s2s_pairs_free(p);
        s2s_builder_free(b);
        return -1;
    }
    /* offsets become pointers now that the text no longer moves */
    for (size_t i = 0; i < b->ntok[0]; i++)
        p->src_tok[i] = b->text + b->off[0][i];
    for (size_t i = 0; i < b->ntok[1]; i++)
        p->tgt_tok[i] = b->text + b->off[1][i];
    p->n = b->n;
    p->src_start = b->start[0];
    p->tgt_start = b->start[1];
    p->align = b->align;
    p->text = b->text;
    b->start[0] = b->start[1] = NULL;
    b->align = NULL;
    b->text = NULL;
    s2s_builder_free(b);
    return 0;
}

/* ---- vocabularies ---------------------------------------------------------------- */

/* FNV-1a: a token's place in a hash table of strings. */
static size_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (size_t)h;
}

/* The slot of s in slot (cap, a power of two; entries id + 1, 0 empty)
 * over names: where it is, or the empty slot where it would go. */
static size_t slot_of(const size_t *slot, size_t cap, const char *const *names, const char *s)
{
    size_t i = hash_str(s) & (cap - 1);
    while (slot[i] && strcmp(names[slot[i] - 1], s) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

/* A table with room for `want` names (filled at most half), holding the
 * first n of names. 0, or -1 when the size overflows or memory runs out. */
static int slot_rebuild(size_t **slot, size_t *cap, const char *const *names, size_t n,
                        size_t want)
{
    size_t c = 16, twice;
    size_t *ns;
    if (size_mul(want, 2, &twice))
        return -1;
    while (c < twice)
        if (size_mul(c, 2, &c))
            return -1;
    if (c == *cap)
        return 0;
    if (!(ns = calloc(c, sizeof *ns)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t at = slot_of(ns, c, names, names[i]);
        if (!ns[at])
            ns[at] = i + 1; /* a name given twice keeps its first id */
    }
    free(*slot);
    *slot = ns;
    *cap = c;
    return 0;
}

void s2s_vocab_free(s2s_vocab *v)
{
    for (size_t i = 0; v->tokens && i < v->n; i++)
        free(v->tokens[i]);
    free(v->tokens);
    free(v->slot);
    memset(v, 0, sizeof *v);
}

long s2s_vocab_find(const s2s_vocab *v, const char *token)
{
    size_t i;
    if (!v->cap)
        return -1;
    i = slot_of(v->slot, v->cap, (const char *const *)v->tokens, token);
    return v->slot[i] ? (long)(v->slot[i] - 1) : -1;
}

int s2s_vocab_id(const s2s_vocab *v, const char *token)
{
    long id = s2s_vocab_find(v, token);
    return id < 0 ? S2S_UNK : (int)id;
}

/* A vocabulary of the n names (copied), in that order; the caller has
 * checked that none repeats. 0, or -1 out of memory. */
static int vocab_make(s2s_vocab *v, const char *const *names, size_t n)
{
    memset(v, 0, sizeof *v);
    if (n > SIZE_MAX / sizeof *v->tokens || !(v->tokens = calloc(n ? n : 1, sizeof *v->tokens)))
        return -1;
    for (v->n = 0; v->n < n; v->n++) {
        size_t len = strlen(names[v->n]) + 1;
        if (!(v->tokens[v->n] = malloc(len))) {
            s2s_vocab_free(v);
            return -1;
        }
        memcpy(v->tokens[v->n], names[v->n], len);
    }
    if (slot_rebuild(&v->slot, &v->cap, (const char *const *)v->tokens, n, n)) {
        s2s_vocab_free(v);
        return -1;
    }
    return 0;
}

/* A distinct token of the data: how often, and where it first appeared. */
typedef struct token_count {
    size_t count, first;
    const char *token;
} token_count;

/* By falling count, ties by first appearance: d2l's stable sort. */
static int by_count(const void *x, const void *y)
{
    const token_count *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

/* The distinct tokens of tok (n,) with their counts into *out (*nu of
 * them, in order of first appearance): d2l's count_corpus. 0 or -1. */
static int count_tokens(const char *const *tok, size_t n, token_count **out, size_t *nu)
{
    const char **names = NULL;
    size_t *slot = NULL, cap = 0;
    token_count *tc = NULL;
    *nu = 0;
    if (n > SIZE_MAX / sizeof *tc || !(tc = malloc((n ? n : 1) * sizeof *tc)) ||
        !(names = calloc(n ? n : 1, sizeof *names)) ||
        slot_rebuild(&slot, &cap, names, 0, n))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        size_t at = slot_of(slot, cap, names, tok[i]);
        if (slot[at]) {
            tc[slot[at] - 1].count++;
            continue;
        }
        names[*nu] = tok[i];
        tc[*nu] = (token_count){1, *nu, tok[i]};
        slot[at] = ++*nu;
    }
    free(names);
    free(slot);
    *out = tc;
    return 0;
fail:
    free(tc);
    free(names);
    free(slot);
    return -1;
}

int s2s_vocab_build(s2s_vocab *v, const s2s_pairs *p, int side, size_t min_freq,
                        char *err, size_t errlen)
{
    const char *const *tok = side == S2S_SRC ? p->src_tok : p->tgt_tok;
    size_t n = p->n ? (side == S2S_SRC ? p->src_start : p->tgt_start)[p->n] : 0;
    token_count *tc = NULL;
    const char **names = NULL;
    size_t nu, nv = 0;
    memset(v, 0, sizeof *v);
    if (count_tokens(tok, n, &tc, &nu) ||
        !(names = malloc((nu + S2S_RESERVED) * sizeof *names)))
        goto oom;
    if (nu > 1)
        qsort(tc, nu, sizeof *tc, by_count);
    for (nv = 0; nv < S2S_RESERVED; nv++)
        names[nv] = reserved[nv];
    for (size_t i = 0; i < nu && tc[i].count >= min_freq; i++) {
        size_t r = 0;
        while (r < S2S_RESERVED && strcmp(tc[i].token, reserved[r]) != 0)
            r++;
        if (r == S2S_RESERVED)
            names[nv++] = tc[i].token; /* a reserved token is not added twice */
    }
    if (nv > S2S_MAX_VOCAB) {
        snprintf(err, errlen, _("%zu distinct tokens, more than %d"), nv, S2S_MAX_VOCAB);
        goto fail;
    }
    if (vocab_make(v, names, nv))
        goto oom;
    free(tc);
    free(names);
    return 0;
oom:
    snprintf(err, errlen, _("out of memory for a vocabulary of %zu tokens"), n);
fail:
    free(tc);
    free(names);
    return -1;
}

int s2s_vocab_from_list(s2s_vocab *v, const char *const *tokens, size_t n,
                            const char *path, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (n < S2S_RESERVED) {
        snprintf(err, errlen, _("%s: expected at least %d tokens (<unk>, <pad>, <bos>, <eos>), "
                 "got %zu"), path, S2S_RESERVED, n);
        return -1;
    }
    if (n > S2S_MAX_VOCAB) {
        snprintf(err, errlen, _("%s: %zu tokens, more than %d"), path, n, S2S_MAX_VOCAB);
        return -1;
    }
    for (size_t i = 0; i < S2S_RESERVED; i++)
        if (strcmp(tokens[i], reserved[i]) != 0) {
            snprintf(err, errlen, _("%s[%zu]: expected \"%s\" (a vocabulary starts <unk>, <pad>, "
                     "<bos>, <eos>), got \"%.64s\""), path, i, reserved[i], tokens[i]);
            return -1;
        }
    if (vocab_make(v, tokens, n)) {
        snprintf(err, errlen, _("%s: out of memory for %zu tokens"), path, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        long first = s2s_vocab_find(v, tokens[i]);
        if ((size_t)first != i) {
            snprintf(err, errlen, _("%s[%zu]: \"%.64s\" again (it is entry %ld)"), path, i,
                     tokens[i], first);
            s2s_vocab_free(v);
            return -1;
        }
    }
    return 0;
}

/* ---- arrays ------------------------------------------------------------------------ */

long s2s_vocab_encode(int *row, const s2s_vocab *v, const char *const *tok, size_t n,
                    size_t T, int *cut)
{
    long valid = 0;
    /* row (T,): the tokens' ids, <eos>, then <pad> to T (truncate_pad) */
    for (size_t j = 0; j < T; j++) {
        row[j] = j < n ? s2s_vocab_id(v, tok[j]) : j == n ? S2S_EOS : S2S_PAD;
        valid += row[j] != S2S_PAD; /* d2l: (array != vocab['<pad>']).sum(1) */
    }
    if (cut)
        *cut = n >= T;
    return valid;
}

void s2s_arrays_free(s2s_arrays *a)
{
    FREE_EACH(a->src, a->tgt, a->dec_in, a->src_valid, a->tgt_valid);
    memset(a, 0, sizeof *a);
}

int s2s_arrays_build(s2s_arrays *a, const s2s_pairs *p, const s2s_vocab *src_v,
                         const s2s_vocab *tgt_v, size_t T, char *err, size_t errlen)
{
    size_t NT, bytes, N = p->n;
    memset(a, 0, sizeof *a);
    if (T == 0) {
        snprintf(err, errlen, "%s", _("num_steps 0: a sentence needs at least one position"));
        return -1;
    }
    if (size_mul(N, T, &NT) || size_mul(NT, sizeof(int), &bytes) ||
        N > SIZE_MAX / sizeof(long)) {
        snprintf(err, errlen, _("%zu pairs of %zu steps are too many"), N, T);
        return -1;
    }
    a->src = malloc(bytes ? bytes : 1);
    a->tgt = malloc(bytes ? bytes : 1);
    a->dec_in = malloc(bytes ? bytes : 1);
    a->src_valid = malloc((N ? N : 1) * sizeof(long));
    a->tgt_valid = malloc((N ? N : 1) * sizeof(long));
    if (!a->src || !a->tgt || !a->dec_in || !a->src_valid || !a->tgt_valid) {
        s2s_arrays_free(a);
        snprintf(err, errlen, _("out of memory for %zu pairs of %zu steps"), N, T);
        return -1;
    }
    a->n = N;
    a->T = T;
    for (size_t i = 0; i < N; i++) {
        size_t ns, nt;
        int cut_s, cut_t;
        const char *const *s = s2s_src(p, i, &ns), *const *t = s2s_tgt(p, i, &nt);
        int *y = a->tgt + i * T, *x = a->dec_in + i * T;
        a->src_valid[i] = s2s_vocab_encode(a->src + i * T, src_v, s, ns, T, &cut_s);
        a->tgt_valid[i] = s2s_vocab_encode(y, tgt_v, t, nt, T, &cut_t);
        a->n_cut += (size_t)cut_s + (size_t)cut_t;
        /* teacher forcing: the decoder reads <bos>, then Y without its last entry */
        x[0] = S2S_BOS;
        for (size_t j = 1; j < T; j++)
            x[j] = y[j - 1];
    }
    return 0;
}

/* ---- decoding, BLEU, alignment -------------------------------------------------------- */

size_t s2s_until_eos(const int *ids, size_t n)
{
    size_t i = 0;
    while (i < n && ids[i] != S2S_EOS)
        i++;
    return i;
}

char *s2s_ids_to_sentence(const s2s_vocab *v, const int *ids, size_t n)
{
    size_t len = s2s_until_eos(ids, n);
    const char **tok;
    char *s;
    if (len > SIZE_MAX / sizeof *tok || !(tok = malloc((len ? len : 1) * sizeof *tok)))
        return NULL;
    for (size_t i = 0; i < len; i++)
        tok[i] = ids[i] >= 0 && (size_t)ids[i] < v->n ? v->tokens[ids[i]] : reserved[S2S_UNK];
    s = s2s_join(tok, len);
    free(tok);
    return s;
}

size_t s2s_alignment_hits(const float *weights, size_t H, size_t Tq, size_t S,
                              const long *align, size_t n_words, size_t *counted)
{
    size_t hits = 0, plane = Tq * S; /* one head's (Tq, S); the caller's tensor fits */
    for (size_t t = 0; t < n_words && t < Tq; t++) {
        size_t best = 0;
        double top = 0.0;
        if (align[t] < 0)
            continue; /* translates no source word */
        (*counted)++;
        /* the row's largest weight summed over the heads, the first on ties */
        for (size_t s = 0; s < S; s++) {
            double w = 0.0;
            for (size_t h = 0; h < H; h++)
                w += weights[h * plane + t * S + s];
            if (s == 0 || w > top) {
                top = w;
                best = s;
            }
        }
        hits += S > 0 && (size_t)align[t] == best;
    }
    return hits;
}
