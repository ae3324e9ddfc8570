/* seq2seq_data.h — the data of an encoder–decoder that translates
 * (SPEC.md §11), as d2l's load_data_nmt makes it: sentence pairs of
 * tokens, the two vocabularies (d2l's Vocab), the padded arrays with
 * <eos> and <bos> (build_array_nmt, teacher forcing), and what greedy
 * decoding needs without the model: predicted ids back to words, BLEU
 * (d2l's bleu) and the alignment score of the cross-attention.
 *
 * Dimensions, here and in every shape comment:
 *   N   sentence pairs
 *   T   num_steps: the length every sentence is cut or padded to
 *   V   entries of a vocabulary
 *   H   attention heads
 *   Tq  target positions (the decoder's queries), S source positions (keys)
 *
 * Who owns what: every structure here owns its memory and is released by
 * its _free function, which also accepts a zeroed structure (and resets
 * it). Functions return 0, or -1 with one line in err[errlen] (no file
 * name: the caller adds it).
 */
#ifndef ATTN_SEQ2SEQ_DATA_H
#define ATTN_SEQ2SEQ_DATA_H

#include <stddef.h>

/* ---- sentence pairs ------------------------------------------------------ */

/* N pairs of token lists. The source tokens of pair i are
 * src_tok[src_start[i] … src_start[i+1]), its target tokens
 * tgt_tok[tgt_start[i] … tgt_start[i+1]); a token is a NUL-terminated
 * string (possibly empty: d2l's split(' ') keeps empty tokens) pointing
 * into `text`, which the structure owns.
 *
 * align, when not NULL, has one entry per target token: the position
 * (within its own source sentence, from 0) of the source token that the
 * target token translates, or −1 when it translates none. The built-in
 * grammar (seq2seq_task.h) knows it; data read from files has none. */
typedef struct s2s_pairs {
    size_t n;              /* N */
    size_t *src_start;     /* (N + 1,) */
    size_t *tgt_start;     /* (N + 1,) */
    const char **src_tok;  /* (src_start[N],) */
    const char **tgt_tok;  /* (tgt_start[N],) */
    long *align;           /* (tgt_start[N],) or NULL */
    char *text;            /* the tokens' bytes */
} s2s_pairs;

/* Training pairs and held-out pairs (heldout.n 0: none). A set of no
 * pairs may be a zeroed structure (NULL arrays): test n, not the arrays. */
typedef struct s2s_corpus {
    s2s_pairs train;
    s2s_pairs heldout;
} s2s_corpus;

void s2s_pairs_free(s2s_pairs *p);
void s2s_corpus_free(s2s_corpus *c);

/* Pair i's source (*n tokens): a pointer into p. */
const char *const *s2s_src(const s2s_pairs *p, size_t i, size_t *n);
/* Pair i's target (*n tokens), and its alignment (NULL without one). */
const char *const *s2s_tgt(const s2s_pairs *p, size_t i, size_t *n);
const long *s2s_align(const s2s_pairs *p, size_t i);

/* The tokens joined by single spaces, as d2l's ' '.join: a new string the
 * caller frees; NULL when out of memory. */
char *s2s_join(const char *const *tok, size_t n);

/* ---- building pairs ------------------------------------------------------- */

/* Pairs are built token by token: s2s_builder_token(b, side, …) adds
 * one token to the pair being built (side S2S_SRC or S2S_TGT, in
 * any order), s2s_builder_pair ends the pair, s2s_builder_finish
 * hands the pairs over. The fields are private. */
enum { S2S_SRC = 0, S2S_TGT = 1 };

typedef struct s2s_builder {
    char *text;                 /* the tokens' bytes, each NUL-terminated */
    size_t text_len, text_cap;
    size_t pair_text;           /* text_len when the pair being built began */
    size_t *off[2];             /* per side: each token's offset in text */
    size_t ntok[2], cap_tok[2];
    size_t *start[2];           /* per side: (n + 1,) the pairs' first tokens */
    size_t cap_start[2];
    size_t n;                   /* pairs ended */
    long *align;                /* (ntok[1],) once a pair has an alignment */
    size_t cap_align;
} s2s_builder;

void s2s_builder_init(s2s_builder *b);
/* One token of len bytes (no NUL among them). 0, or -1 out of memory. */
int s2s_builder_token(s2s_builder *b, int side, const char *s, size_t len);
/* text[0 … len) split as Python's text.split(' ') on single spaces: two
 * spaces in a row, or a space at either end, give an empty token ("" is
 * one empty token), as d2l's tokenize_nmt. *ntok gets the number added. */
int s2s_builder_split_d2l(s2s_builder *b, int side, const char *s, size_t len,
                              size_t *ntok);
/* text split on runs of spaces, empty tokens dropped ("a  b " gives a, b;
 * "" and "  " give none); *ntok the number added. */
int s2s_builder_split_words(s2s_builder *b, int side, const char *s, size_t len,
                                size_t *ntok);
/* End the pair: its tokens added since the last call. align, when not
 * NULL, holds one entry per target token of the pair (see s2s_pairs);
 * a pair without one gets −1 entries once another pair has one. */
int s2s_builder_pair(s2s_builder *b, const long *align);
/* Drop the tokens added since the last pair (a line found to be bad). */
void s2s_builder_drop(s2s_builder *b);
/* The pairs built, into *p (the builder is then empty). 0 or -1 (out of
 * memory: the builder is freed either way). */
int s2s_builder_finish(s2s_builder *b, s2s_pairs *p);
void s2s_builder_free(s2s_builder *b);

/* ---- vocabularies ----------------------------------------------------------- */

/* d2l's Vocab(tokens, min_freq, reserved_tokens=['<pad>', '<bos>',
 * '<eos>']): entry 0 is "<unk>", 1 "<pad>", 2 "<bos>", 3 "<eos>", then
 * every token counted at least min_freq times (min_freq 0 and 1 alike),
 * by falling count, ties in order of first appearance (Python's Counter
 * keeps insertion order and its sort is stable); a token that is already
 * an entry (a reserved one written in the data) is not added again. A
 * token not in the vocabulary reads as "<unk>". */
#define S2S_UNK 0
#define S2S_PAD 1
#define S2S_BOS 2
#define S2S_EOS 3
#define S2S_RESERVED 4

/* The largest vocabulary: ids are ints. */
#define S2S_MAX_VOCAB 10000000

typedef struct s2s_vocab {
    size_t n;         /* V */
    char **tokens;    /* (V,) owned strings: tokens[id] */
    size_t *slot;     /* (cap,) hash table of id + 1, 0 for an empty slot */
    size_t cap;
} s2s_vocab;

/* From the tokens of one side of pairs (the source or the target), by
 * d2l's rules above. */
int s2s_vocab_build(s2s_vocab *v, const s2s_pairs *p, int side, size_t min_freq,
                        char *err, size_t errlen);
/* From a list (a saved model's "src_vocab"): it must start with <unk>,
 * <pad>, <bos>, <eos> and hold no token twice; path names the list in
 * messages ("$.src_vocab": "$.src_vocab[2]: expected \"<bos>\", got
 * \"x\""). */
int s2s_vocab_from_list(s2s_vocab *v, const char *const *tokens, size_t n,
                            const char *path, char *err, size_t errlen);
/* The id of a token: S2S_UNK when unknown (d2l's vocab[token]). */
int s2s_vocab_id(const s2s_vocab *v, const char *token);
/* The id of a token, or −1 when unknown. */
long s2s_vocab_find(const s2s_vocab *v, const char *token);
void s2s_vocab_free(s2s_vocab *v);

/* ---- arrays ------------------------------------------------------------------ */

/* d2l's build_array_nmt for one sentence: row (T,) = the ids of its n
 * tokens, then <eos>, cut to T entries or padded with <pad>
 * (truncate_pad); the return value is the valid length, the number of
 * entries that are not <pad> (a token read as <pad> is not counted, as
 * in d2l). *cut, when not NULL, is 1 when the <eos> did not fit. T ≥ 1. */
long s2s_vocab_encode(int *row, const s2s_vocab *v, const char *const *tok, size_t n,
                    size_t T, int *cut);

/* A whole set of pairs as the model reads it:
 *   src       (N, T) source ids + <eos>, padded: the encoder's input
 *   src_valid (N,)   its valid lengths (the encoder's valid_lens)
 *   tgt       (N, T) target ids + <eos>, padded: the labels Y
 *   tgt_valid (N,)   its valid lengths (the loss masks the rest)
 *   dec_in    (N, T) <bos>, then tgt without its last entry: the decoder's
 *                    input under teacher forcing (d2l's train_seq2seq)
 * n_cut counts the sentences (of either side) whose <eos> did not fit. */
typedef struct s2s_arrays {
    size_t n, T;
    int *src, *tgt, *dec_in;
    long *src_valid, *tgt_valid;
    size_t n_cut;
} s2s_arrays;

/* 0, or -1 when T is 0 or N·T overflows or memory runs out. */
int s2s_arrays_build(s2s_arrays *a, const s2s_pairs *p, const s2s_vocab *src_v,
                         const s2s_vocab *tgt_v, size_t T, char *err, size_t errlen);
void s2s_arrays_free(s2s_arrays *a);

/* ---- decoding, BLEU, alignment ------------------------------------------------ */

/* How many of the n predicted ids come before the first <eos> (all n when
 * there is none): the length of d2l's output_seq. */
size_t s2s_until_eos(const int *ids, size_t n);

/* The predicted ids (n,) as d2l's predict_seq2seq returns them: the
 * tokens before the first <eos>, joined by single spaces ("" when the
 * first is <eos>); an id outside the vocabulary reads "<unk>". A new
 * string the caller frees; NULL when out of memory. */
char *s2s_ids_to_sentence(const s2s_vocab *v, const int *ids, size_t n);

/* d2l's bleu(pred_seq, label_seq, k) on token lists:
 *   exp(min(0, 1 − len_label / len_pred)) · Π_{m=1..k} p_m^(1/2^m),
 *   p_m = (the prediction's m-grams found in the label, each label m-gram
 *         used at most as often as it occurs there) / (len_pred − m + 1).
 * Where d2l divides by zero — a prediction shorter than m, so that
 * len_pred − m + 1 ≤ 0 — the factor p_m is 0 (no m-gram matched), and so
 * is the score; an empty prediction (len_pred 0) scores 0. p^(1/2^m) is m
 * square roots, each exactly rounded. k ≥ 1 (SPEC: k = 2). */
double s2s_bleu(const char *const *pred, size_t len_pred, const char *const *label,
                    size_t len_label, unsigned k);
/* The same on sentences split as Python's s.split(' ') (d2l's own call:
 * "" is one empty token, two spaces give an empty token between them).
 * -1 when out of memory. */
double s2s_bleu_text(const char *pred, const char *label, unsigned k);

/* The alignment score's count for one teacher-forced target sentence.
 * weights (H, Tq, S): the cross-attention of H heads, target position t
 * (the decoder's output that writes target word t) over source positions
 * s; the heads are summed in order 0 … H−1 (their mean's largest entry is
 * the sum's). align (n_words,): the source position each of the first
 * n_words target words translates (n_words ≤ Tq; the <eos> and the
 * padding after them are not words). A word counts when align[t] ≥ 0; it
 * is a hit when its row's largest summed weight (the first such, as
 * torch.argmax) is at align[t] (a source position ≥ S, cut off, is a
 * miss). The hits are returned and the words counted added to *counted:
 * the share is hits / counted over a set of sentences. */
size_t s2s_alignment_hits(const float *weights, size_t H, size_t Tq, size_t S,
                              const long *align, size_t n_words, size_t *counted);

#endif
