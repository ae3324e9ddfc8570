/* seq2seq_task.c — the English → French grammar of --task translate
 * (see seq2seq_task.h): its tables, one sentence as its choices, the
 * two renderings with the alignment, and the seeded draw of distinct
 * training and held-out pairs. */
#include "seq2seq_task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "i18n.h"

/* ---- the tables ------------------------------------------------------------ */

enum { MASC = 0, FEM = 1 };

#define N_DET 2
#define N_ADJ 3
#define N_COLOUR 5
#define N_NOUN 14
#define N_VERB 7

/* An English word and its French forms, masculine then feminine. */
typedef struct word2 {
    const char *en, *fr[2];
} word2;

static const word2 dets[N_DET] = {{"the", {"le", "la"}}, {"a", {"un", "une"}}};
static const word2 adjs[N_ADJ] = {
    {"small", {"petit", "petite"}}, {"big", {"grand", "grande"}}, {"pretty", {"joli", "jolie"}}};
static const word2 colours[N_COLOUR] = {
    {"red", {"rouge", "rouge"}},    {"black", {"noir", "noire"}}, {"white", {"blanc", "blanche"}},
    {"green", {"vert", "verte"}},   {"blue", {"bleu", "bleue"}}};

/* A noun: English, French, the French gender. */
typedef struct noun {
    const char *en, *fr;
    int gender;
} noun;

static const noun nouns[N_NOUN] = {
    {"apple", "pomme", FEM},   {"car", "voiture", FEM},   {"cat", "chat", MASC},
    {"dog", "chien", MASC},    {"boy", "garçon", MASC},   {"girl", "fille", FEM},
    {"house", "maison", FEM},  {"book", "livre", MASC},   {"horse", "cheval", MASC},
    {"chair", "chaise", FEM},  {"hat", "chapeau", MASC},  {"flower", "fleur", FEM},
    {"cake", "gâteau", MASC},  {"door", "porte", FEM}};

static const char *const verbs[N_VERB][2] = {
    {"sees", "voit"},     {"wants", "veut"},  {"likes", "aime"},   {"takes", "prend"},
    {"follows", "suit"},  {"finds", "trouve"}, {"watches", "regarde"}};

const char *const translate_english_words[] = {
    "the", "a", "an", "small", "big", "pretty", "red", "black", "white", "green", "blue",
    "apple", "car", "cat", "dog", "boy", "girl", "house", "book", "horse", "chair", "hat",
    "flower", "cake", "door",
    "sees", "wants", "likes", "takes", "follows", "finds", "watches", ".", NULL};

const char *const translate_french_words[] = {
    "le", "la", "un", "une", "petit", "petite", "grand", "grande", "joli", "jolie",
    "rouge", "noir", "noire", "blanc", "blanche", "vert", "verte", "bleu", "bleue",
    "pomme", "voiture", "chat", "chien", "garçon", "fille", "maison", "livre", "cheval",
    "chaise", "chapeau", "fleur", "gâteau", "porte",
    "voit", "veut", "aime", "prend", "suit", "trouve", "regarde", ".", NULL};

/* ---- a sentence as its choices -------------------------------------------------- */

/* A noun phrase: det 0 … N_DET−1; adj and colour 0 for none, else 1 + the
 * table index; noun 0 … N_NOUN−1. */
typedef struct phrase {
    int det, adj, colour, noun;
} phrase;

typedef struct sentence {
    phrase subj, obj;
    int verb;
} sentence;

#define N_PHRASES (N_DET * (N_ADJ + 1) * (N_COLOUR + 1) * N_NOUN)
_Static_assert((unsigned long)N_PHRASES * N_VERB * N_PHRASES == TRANSLATE_SENTENCES,
               "TRANSLATE_SENTENCES counts the grammar's sentences");

/* A sentence's number, 0 … TRANSLATE_SENTENCES − 1 (distinct sentences,
 * distinct numbers). */
static unsigned long phrase_code(const phrase *p)
{
    return (((unsigned long)p->det * (N_ADJ + 1) + (unsigned long)p->adj) * (N_COLOUR + 1) +
            (unsigned long)p->colour) * N_NOUN + (unsigned long)p->noun;
}

static unsigned long sentence_code(const sentence *s)
{
    return (phrase_code(&s->subj) * N_VERB + (unsigned long)s->verb) * N_PHRASES +
           phrase_code(&s->obj);
}

/* Both renderings of a sentence: en and fr (room for TRANSLATE_MAX_WORDS
 * each), align (the English position of each French word), *n words. */
typedef struct rendering {
    const char *en[TRANSLATE_MAX_WORDS], *fr[TRANSLATE_MAX_WORDS];
    long align[TRANSLATE_MAX_WORDS];
    size_t n;
} rendering;

/* A noun phrase at the end of r. English: det [adj] [colour] noun; French:
 * det [adj] noun [colour], the det, adj and colour in the noun's gender. */
static void render_phrase(rendering *r, const phrase *p)
{
    const noun *nn = &nouns[p->noun];
    const int g = nn->gender;
    const size_t at = r->n; /* the phrase's first position, in both */
    size_t e = at, f = at, noun_en;
    r->en[e] = dets[p->det].en;
    r->fr[f] = dets[p->det].fr[g];
    r->align[f++] = (long)e++;
    if (p->det == 1 && !p->adj && !p->colour && strchr("aeiou", nn->en[0]))
        r->en[e - 1] = "an"; /* an apple (the adjectives and colours start with consonants) */
    if (p->adj) {
        r->en[e] = adjs[p->adj - 1].en;
        r->fr[f] = adjs[p->adj - 1].fr[g];
        r->align[f++] = (long)e++;
    }
    if (p->colour)
        r->en[e++] = colours[p->colour - 1].en;
    noun_en = e;
    r->en[e++] = nn->en;
    r->fr[f] = nn->fr;
    r->align[f++] = (long)noun_en;
    if (p->colour) {
        /* the colour moves after the noun: the alignment crosses */
        r->fr[f] = colours[p->colour - 1].fr[g];
        r->align[f++] = (long)noun_en - 1;
    }
    r->n = e;
}

static void render(rendering *r, const sentence *s)
{
    r->n = 0;
    render_phrase(r, &s->subj);
    r->en[r->n] = verbs[s->verb][0];
    r->fr[r->n] = verbs[s->verb][1];
    r->align[r->n] = (long)r->n;
    r->n++;
    render_phrase(r, &s->obj);
    r->en[r->n] = r->fr[r->n] = ".";
    r->align[r->n] = (long)r->n;
    r->n++;
}

/* ---- reading an English sentence --------------------------------------------------- */

/* The index of w among the English words of table (n entries, stride
 * bytes apart, the English first), or −1. */
static int find_en(const void *table, size_t n, size_t stride, const char *w)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(*(const char *const *)((const char *)table + i * stride), w) == 0)
            return (int)i;
    return -1;
}

/* A noun phrase at words[*at …]: 0 with *at past it, or -1. */
static int parse_phrase(const char *const *w, size_t n, size_t *at, phrase *p)
{
    int k;
    if (*at < n && strcmp(w[*at], "an") == 0) /* English's "a" before a vowel */
        p->det = 1;
    else if (*at >= n || (p->det = find_en(dets, N_DET, sizeof dets[0], w[*at])) < 0)
        return -1;
    (*at)++;
    p->adj = p->colour = 0;
    if (*at < n && (k = find_en(adjs, N_ADJ, sizeof adjs[0], w[*at])) >= 0) {
        p->adj = k + 1;
        (*at)++;
    }
    if (*at < n && (k = find_en(colours, N_COLOUR, sizeof colours[0], w[*at])) >= 0) {
        p->colour = k + 1;
        (*at)++;
    }
    if (*at >= n || (p->noun = find_en(nouns, N_NOUN, sizeof nouns[0], w[*at])) < 0)
        return -1;
    (*at)++;
    return 0;
}

int translate_english(const char *const *words, size_t n, const char **out, long *align)
{
    sentence s;
    rendering r;
    size_t at = 0;
    if (parse_phrase(words, n, &at, &s.subj) || at >= n ||
        (s.verb = find_en(verbs, N_VERB, sizeof verbs[0], words[at])) < 0)
        return -1;
    at++;
    if (parse_phrase(words, n, &at, &s.obj) || at + 1 != n || strcmp(words[at], ".") != 0)
        return -1;
    render(&r, &s);
    for (size_t i = 0; i < r.n; i++) {
        out[i] = r.fr[i];
        if (align)
            align[i] = r.align[i];
    }
    return (int)r.n;
}

/* ---- drawing pairs -------------------------------------------------------------------- */

static void draw_phrase(rng *g, phrase *p)
{
    p->det = (int)(rng_next(g) % N_DET);
    p->adj = rng_next(g) % 2 ? 1 + (int)(rng_next(g) % N_ADJ) : 0;
    p->colour = rng_next(g) % 2 ? 1 + (int)(rng_next(g) % N_COLOUR) : 0;
    p->noun = (int)(rng_next(g) % N_NOUN);
}

static void draw_sentence(rng *g, sentence *s)
{
    draw_phrase(g, &s->subj);
    s->verb = (int)(rng_next(g) % N_VERB);
    draw_phrase(g, &s->obj);
}

/* n sentences drawn from g that are not yet in seen (a bit per sentence
 * number), each then marked, added to b with their French and alignment.
 * 0 or -1 (out of memory). */
static int draw_pairs(s2s_builder *b, rng *g, unsigned char *seen, size_t n)
{
    for (size_t i = 0; i < n;) {
        sentence s;
        rendering r;
        unsigned long code;
        draw_sentence(g, &s);
        code = sentence_code(&s);
        if (seen[code / 8] & (1u << (code % 8)))
            continue; /* held out, or drawn already */
        seen[code / 8] |= (unsigned char)(1u << (code % 8));
        render(&r, &s);
        for (size_t k = 0; k < r.n; k++)
            if (s2s_builder_token(b, S2S_SRC, r.en[k], strlen(r.en[k])) ||
                s2s_builder_token(b, S2S_TGT, r.fr[k], strlen(r.fr[k])))
                return -1;
        if (s2s_builder_pair(b, r.align))
            return -1;
        i++;
    }
    return 0;
}

/* One set of n distinct pairs drawn from seed into p. 0 or -1. */
static int make_set(s2s_pairs *p, unsigned long long seed, unsigned char *seen, size_t n)
{
    s2s_builder b;
    rng g;
    s2s_builder_init(&b);
    rng_seed(&g, seed);
    if (draw_pairs(&b, &g, seen, n)) {
        s2s_builder_free(&b);
        return -1;
    }
    return s2s_builder_finish(&b, p);
}

int translate_task_make(s2s_corpus *c, unsigned long long seed, size_t n_train,
                        size_t n_heldout, char *err, size_t errlen)
{
    unsigned char *seen;
    memset(c, 0, sizeof *c);
    if (n_train == 0) {
        snprintf(err, errlen, "%s", _("the translate task needs at least one training pair"));
        return -1;
    }
    if (n_train > TRANSLATE_MAX_PAIRS || n_heldout > TRANSLATE_MAX_PAIRS - n_train) {
        snprintf(err, errlen, _("%zu training and %zu held-out pairs: more than the translate "
                 "task draws (%lu in all)"), n_train, n_heldout, TRANSLATE_MAX_PAIRS);
        return -1;
    }
    if (!(seen = calloc(TRANSLATE_SENTENCES / 8 + 1, 1))) {
        snprintf(err, errlen, "%s", _("out of memory for the translate task"));
        return -1;
    }
    /* the held-out sentences first, from a stream of their own; then the
     * training ones, never a held-out one */
    if (make_set(&c->heldout, seed ^ 0x68656c646f757421ULL, seen, n_heldout) || /* "heldout!" */
        make_set(&c->train, seed ^ 0x747261696e696e67ULL, seen, n_train)) {     /* "training" */
        free(seen);
        s2s_corpus_free(c);
        snprintf(err, errlen, _("out of memory for %zu translation pairs"), n_train + n_heldout);
        return -1;
    }
    free(seen);
    return 0;
}
