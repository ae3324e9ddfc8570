/* problem.h — one attention run: the inputs, valid_lens, token labels and
 * the module's weights, loaded from JSON (SPEC.md §4, §5) or made from
 * seeded random numbers, and written back as JSON with the results.
 *
 * Dimensions as in attention.h (B, Nq, Nk, Dq, Dk, Dv, H, NH, p, A).
 * 2-D input arrays mean batch 1 and are stored as (1, N, D).
 */
#ifndef ATTN_PROBLEM_H
#define ATTN_PROBLEM_H

#include <stdio.h>
#include <stddef.h>

#include "attention.h"
#include "tensor.h"

typedef struct problem {
    int self;            /* selfattn: queries = keys = values = X */
    size_t B, Nq, Nk, Dq, Dk, Dv;
    tensor queries;      /* (B, Nq, Dq); X for self-attention */
    tensor keys;         /* (B, Nk, Dk); absent when keys = queries */
    tensor values;       /* (B, Nk, Dv); absent when values = keys */
    long *valid_lens;    /* (B,) or (B, Nq), NULL for none */
    size_t vl_ndim;      /* 0, 1 or 2 */
    mha_params params;
    char **query_tokens; /* (Nq,) labels, (B, Nq) when per_example, or NULL */
    char **key_tokens;   /* (Nk,) labels or NULL (self: = query_tokens) */
    int per_example;     /* self-attention: one sentence of labels per example */
    /* a stack saved by attn train (model_input.h), run block by block at
     * load time: params and queries are block 0's */
    size_t layers;       /* its blocks; 0 for a single attention layer */
    float *stack_weights; /* (L, B, NH, Nq, Nq) every block's attention weights */
    float *stack_output; /* (B, Nq, H) the last block's output */
    int stack_causal;    /* its blocks mask later keys */
} problem;

/* What the options say; fields left 0 mean "not given". */
typedef struct problem_opts {
    int self;
    long batch, queries, kv, hiddens, heads;
    long query_size, key_size, value_size; /* multihead random inputs */
    long score_hiddens;                    /* A for additive scoring */
    int score_given;
    score_kind score;
    int bias;                              /* random weights with biases */
    int fill_random;                       /* inputs: 0 ones, 1 standard normal */
    const long *valid_lens;                /* from --valid-lens */
    size_t vl_ndim, vl_shape[2];
    int no_valid_lens;                     /* --valid-lens none */
    unsigned long long seed;
    const char *tokens;                    /* --tokens "a b c | d e" */
    int no_proj;                           /* identity projections */
    size_t max_mem;
} problem_opts;

/* The pointers attention runs on. */
const float *problem_keys(const problem *pr);
const float *problem_values(const problem *pr);

/* Load from a JSON file (path "-" = stdin). On error: -1, and err holds a
 * message naming the file and the JSON path; *usage is 1 when the error is
 * a usage error (options contradicting the file), else 0. */
int problem_load(problem *pr, const char *path, const problem_opts *o, char *err,
                 size_t errlen, int *usage);

/* The same from a parsed JSON value; name stands for it in messages. */
struct cJSON;
int problem_from_json(problem *pr, const struct cJSON *root, const char *name,
                      const problem_opts *o, char *err, size_t errlen, int *usage);

/* Make from options alone: the chapter's cells by default. On error: -1,
 * with *usage 1 when the options contradict each other, 0 for run-time
 * failures (the memory limit, out of memory). */
int problem_random(problem *pr, const problem_opts *o, char *err, size_t errlen, int *usage);

/* Bytes a forward run of pr needs beyond its inputs and weights: the
 * projections and heads, each thread's scratch, and unless weights == 0 the
 * (B, NH, Nq, Nk) attention weights (four times with explain, for the
 * traced scores); -1 when the count overflows size_t. */
int problem_run_bytes(const problem *pr, int weights, int explain, size_t *bytes);

void problem_free(problem *pr);

/* The output JSON of SPEC.md §4. weights may be NULL (written as null).
 * Returns json_writer_finish's result: 0, or -1 for a malformed document
 * (a bug). Write errors are left to the caller (output_json). */
int problem_write_json(FILE *f, const problem *pr, const char *command, const float *out,
                       const float *weights);

/* The same members into an object jw has open (the page of --html adds
 * its own after them). With jw->base64_from set (a page), the weights are
 * written whole as base64 whatever jw->omit_above says: the page draws
 * them. */
struct json_writer;
void problem_write_members(struct json_writer *jw, const problem *pr, const char *command,
                           const float *out, const float *weights);

/* The embedding of a token: D numbers from a standard normal stream seeded
 * by the token's text, so a word gets the same vector in every sentence. */
void token_embedding(float *x, size_t D, const char *token);

/* --tokens "a b c | d e": sentences of whitespace-separated tokens. On
 * success (0) *words holds the B·N labels, row-major, "<pad>" after a
 * short sentence (free each and the array), and *lens the B lengths
 * (free); else -1 with "--tokens: …" in err. */
int problem_split_tokens(const char *text, size_t *B, size_t *N, char ***words, long **lens,
                         char *err, size_t errlen);

#endif
