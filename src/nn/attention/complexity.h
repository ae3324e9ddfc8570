/* complexity.h — the chapter's comparison of a convolutional layer, a
 * recurrent layer and a self-attention layer (d2l §11.6.2), as real layers
 * with exact multiply-add counts, dependency propagation for the maximum
 * path length, and the least-squares fit that turns measured times into a
 * growth exponent.
 *
 * Dimensions:
 *   n  sequence length (positions 0 … n−1 here; the chapter's x_1 … x_n)
 *   d  channels: input and output width of every layer (d → d)
 *   k  kernel size of a convolution            dil  its dilation
 *   r  neighbourhood (window) size of restricted self-attention; 0 = all
 *
 * Every tensor is row-major float32, one row per position: x (n, d).
 * Sums run in double and are rounded to float32 once, as in attention.c.
 *
 * Multiply-adds: each layer returns how many multiply-adds its loops
 * performed (one multiply-add = one multiplication and one addition, so
 * 2 FLOPs). Counted are the products of weights and activations and of
 * queries, keys and attention weights; not counted are bias additions,
 * tanh, exp, the 1/sqrt(d) scaling and softmax's normalisation, which are
 * O(n·d) or O(n²) and not multiply-adds. A convolution skips its zero
 * padding taps (they would multiply zeros), so they are not counted.
 * The *_macs functions give the same numbers without running a layer.
 * Counts are unsigned long long: they cannot overflow for n ≤ 10^6,
 * d ≤ 65536 and k ≤ 1000 (the command's limits); the largest is
 * d²·k·n ≈ 4.3·10^18 < 2^64.
 *
 * Same padding: a convolution of kernel k and dilation dil reads, for
 * output t, the inputs t + (j − (k−1)/2)·dil for taps j = 0 … k−1 (integer
 * division), positions outside 0 … n−1 being zeros. For odd k this is
 * PyTorch's padding='same'; for even k the extra tap lies to the right.
 * Restricted self-attention lets query t see the keys t − (r−1)/2 …
 * t + r/2, the same window as a convolution of kernel r.
 */
#ifndef ATTN_COMPLEXITY_H
#define ATTN_COMPLEXITY_H

#include <stddef.h>

#include "attention.h"

typedef unsigned long long cx_count;

/* ---- layers ---------------------------------------------------------- */

/* One 1-D convolution layer, same padding:
 *   y[t][o] = b[o] + Σ_j Σ_i W[o][i][j] · x[t + (j − (k−1)/2)·dil][i]
 * y (n, d), x (n, d), W (d, d, k) = PyTorch's Conv1d weight
 * (out_channels, in_channels, kernel_size), b (d,). */
cx_count conv_forward(float *y, const float *x, const float *W, const float *b, size_t n,
                      size_t d, size_t k, size_t dil);

/* One recurrent layer over time, h_0 = 0:
 *   h_t = tanh(W_xh · x_t + W_hh · h_{t−1} + b)
 * H (n, d) holds h_1 … h_n; x (n, d), W_xh (d, d), W_hh (d, d), b (d,).
 * The step at t = 1 multiplies W_hh by h_0 = 0 too, as PyTorch does. */
cx_count rnn_forward(float *H, const float *x, const float *W_xh, const float *W_hh,
                     const float *b, size_t n, size_t d);

/* Keys query t sees: all n when r == 0 (full self-attention), else the
 * window of r positions around t clipped to the sequence, at most
 * cx_attn_row_width(n, r) of them. */
size_t cx_attn_row_width(size_t n, size_t r);

/* One single-head self-attention layer with projections and no W_o:
 *   Q = X·W_qᵀ   K = X·W_kᵀ   V = X·W_vᵀ                      (n, d) each
 *   A = softmax(Q Kᵀ / sqrt(d)) over the keys each query sees
 *   Y = A · V                                                   (n, d)
 * r == 0 is the chapter's self-attention; r >= 1 restricts query t to its
 * window (the Transformer paper's restricted self-attention).
 * A (n, cx_attn_row_width(n, r)): row t holds the weights of its keys in
 * order, starting with its first in-range key. Q, K, V (n, d) are the
 * caller's buffers; X (n, d); the weights are (d, d) nn.Linear weights
 * (linear_forward, shared with the attention commands). */
cx_count cx_attn_forward(float *Y, float *A, float *Q, float *K, float *V, const float *X,
                            const linear *W_q, const linear *W_k, const linear *W_v, size_t n,
                            size_t d, size_t r);

/* ---- multiply-add counts, without running a layer --------------------- */

/* Σ over outputs t of the taps that fall inside the sequence. */
cx_count conv_taps(size_t n, size_t k, size_t dil);
cx_count conv_macs(size_t n, size_t d, size_t k, size_t dil);   /* d²·conv_taps */
cx_count rnn_macs(size_t n, size_t d);                          /* n·(d·d + d·d) */
/* Σ over queries of the keys each sees: n² for r == 0. */
cx_count cx_attn_keys(size_t n, size_t r);
cx_count cx_attn_core_macs(size_t n, size_t d, size_t r);  /* Q Kᵀ and A·V: 2·d·attn_keys */
cx_count cx_attn_proj_macs(size_t n, size_t d);            /* W_q, W_k, W_v: 3·n·d² */

/* ---- maximum path length, by propagating dependencies ------------------ */

/* The question: after how many sequential steps (stacked layers, or the
 * RNN's time steps) does some output position depend on both the first
 * and the last input position — for n = 5 and a kernel of 3, after the
 * 2 layers of the chapter's figure, whose top middle output sees x_1 … x_5.
 * Each function propagates two dependency sets step by step: the positions
 * input 1 has reached and those input n has reached; the answer is the
 * step at which they share a position. n == 1 needs 0 steps.
 *
 * Return values: 0 with *steps set; PATH_STALLED when a step adds no
 * position (the layer never connects positions, e.g. a kernel of 1);
 * PATH_NOMEM when a buffer could not be allocated. */
enum { PATH_STALLED = -1, PATH_NOMEM = -2 };

/* The same window every step: output t reads positions t − left … t + right
 * of the step before. Dependency sets stay intervals, so each step moves
 * two interval ends. */
int path_window(size_t n, size_t left, size_t right, size_t *steps);

/* Stacked convolutions of kernel k, as boolean sets per position; layer l
 * has dilation k^l when dilated (WaveNet's stack), else 1. O(n·k) per
 * layer: for the plain stack (n/k layers) use path_conv. */
int path_conv_sets(size_t n, size_t k, int dilated, size_t *steps);

int path_conv(size_t n, size_t k, size_t *steps);          /* window (k−1)/2, k/2 */
int path_dilated(size_t n, size_t k, size_t *steps);       /* path_conv_sets, dilated */
int path_rnn(size_t n, size_t *steps);                     /* h_t reads h_{t−1}: window 1, 0 */
int path_attention(size_t n, size_t *steps);               /* every key: window n−1, n−1 */
int path_restricted(size_t n, size_t r, size_t *steps);    /* window (r−1)/2, r/2 */

/* ---- measurements ------------------------------------------------------ */

/* The least-squares slope b of log y = a + b·log x over m points: the
 * growth exponent of y in x. NaN when m < 2, a value is not positive, or
 * all x are equal. */
double fit_loglog_slope(const double *x, const double *y, size_t m);

/* The median of v (m >= 1 values); sorts v in place. */
double median_sort(double *v, size_t m);

/* ---- the chapter's table ------------------------------------------------
 *
 * One row per layer type, in the order printed: the complexity as formula
 * and as its value, the exact multiply-adds, the sequential operations,
 * and the maximum path length as O() formula, as exact formula and as
 * measured by propagating dependencies. Each row is built from one row
 * description in complexity.c. */
typedef enum cx_layer {
    CX_CONV,       /* convolution, kernel k */
    CX_RNN,        /* recurrent (tanh) */
    CX_ATTN,       /* self-attention */
    CX_RESTRICTED, /* restricted self-attention, window r */
    CX_DILATED,    /* dilated convolutions, dilation k^l in layer l */
    CX_NLAYERS
} cx_layer;
#define CX_NMEASURED 4 /* CX_CONV … CX_RESTRICTED are timed by cx_measure */

typedef struct cx_row {
    const char *key;        /* JSON name: "convolution" */
    char name[48];          /* "convolution, k = 3" (JSON: in every language) */
    char label[64];         /* name in the reader's language */
    const char *complexity; /* "O(k·n·d²)" */
    double big_o;           /* the formula's value: k·n·d² */
    cx_count macs;          /* multiply-adds as implemented (layer 0 for CX_DILATED) */
    const char *sequential; /* "O(1)" */
    size_t sequential_n;    /* the steps one layer must take in order */
    const char *path;       /* "O(n/k)" */
    double path_big_o;      /* n/k */
    char path_exact[40];    /* "⌈(n−1)/(k−1)⌉" */
    size_t path_formula;    /* its value */
    size_t path_measured;   /* by dependency propagation */
    const char *unit;       /* "layers" or "steps" */
    double stack_macs;      /* multiply-adds of the stack that connects x_1 and x_n */
} cx_row;

/* Where self-attention becomes costlier than one other layer: the first n
 * from which it stays costlier. */
typedef struct cx_crossover {
    const char *rule; /* "n > d" */
    size_t big_o_n;   /* from the O() formulas */
    size_t core_n;    /* exact counts, QKᵀ and A·V only */
    size_t proj_n;    /* exact counts with W_q, W_k, W_v */
} cx_crossover;

typedef struct cx_table {
    size_t n, d, k, r;
    cx_row rows[CX_NLAYERS];
    cx_count attn_core, attn_proj; /* self-attention's two parts */
    cx_count restricted_core;      /* restricted self-attention's QKᵀ and A·V */
    cx_count conv_full;            /* k·n·d², padding taps included */
    cx_count conv_taps;            /* conv_taps(n, k, 1) */
    cx_count attn_keys;            /* cx_attn_keys(n, r): keys in the windows */
    cx_crossover than_rnn, than_conv;
} cx_table;

/* The table for n ≥ 1, d ≥ 1, k ≥ 2, r ≥ 2 (the command's ranges). Returns
 * 0, or PATH_NOMEM, or PATH_STALLED with the layer in *layer. */
int cx_table_build(cx_table *t, size_t n, size_t d, size_t k, size_t r, cx_layer *layer);

/* Multiply-adds of one pass of a layer type over n positions (CX_DILATED:
 * its layer 0, dilation 1). */
cx_count cx_layer_macs(cx_layer layer, size_t n, size_t d, size_t k, size_t r);

/* ---- timing the layers --------------------------------------------------
 *
 * cx_measure runs the four layers of CX_CONV … CX_RESTRICTED on random
 * input for each n of a sweep and times them: one untimed pass per layer
 * and n (which checks its count against cx_layer_macs and sets how many
 * passes one timed repetition takes, at least CX_TIMED_SECONDS of work),
 * then reps timed repetitions in rounds over every layer and n, so that a
 * burst of other work on the machine spoils one repetition of many points
 * rather than every repetition of one; the median of the repetitions by
 * each clock; and the growth exponents fitted on the upper half of the
 * sweep. */
#define CX_MAX_SWEEP 24       /* points: doubling from 1 to 10^6 gives 21 */
#define CX_MAX_REPS 101       /* repetitions per layer and n */
#define CX_TIMED_SECONDS 0.01 /* one timed repetition runs at least this long */
#define CX_MAX_ITERS 100000L  /* … but never more passes than this */

/* The two clocks: the CPU time of this process, which leaves out the time
 * the process waits while other programs have the cores, and wall-clock
 * time. */
enum { CX_CPU = 0, CX_WALL = 1 };

typedef struct cx_measurement {
    size_t d, k, r, reps;
    size_t m;               /* points in the sweep */
    size_t n[CX_MAX_SWEEP]; /* FROM, 2·FROM, …, TO */
    int clock;              /* the one shown and plotted: CX_CPU or CX_WALL */
    /* median time of one forward pass, by each clock */
    double seconds[2][CX_NMEASURED][CX_MAX_SWEEP];
    cx_count macs[CX_NMEASURED][CX_MAX_SWEEP]; /* multiply-adds of that pass */
    size_t fit_from;                           /* first point of the fit */
    double slope[2][CX_NMEASURED];             /* fitted exponent of time in n, by each clock */
    double count_slope[CX_NMEASURED];          /* the same fit on log multiply-adds */
    double total_seconds;                      /* wall-clock time of the whole sweep */
} cx_measurement;

/* The sweep from, 2·from, 4·from, … below to, then to (1 ≤ from ≤ to), at
 * most CX_MAX_SWEEP points, into me->n and me->m. */
void cx_sweep_points(cx_measurement *me, size_t from, size_t to);

/* Bytes of the buffers cx_measure allocates for n up to N; -1 on overflow. */
int cx_measure_bytes(size_t N, size_t d, size_t k, size_t *bytes);

/* Called before each pass that is timed or calibrated: the work done and
 * the total (in multiply-adds, plus 10^6 a pass), the layer and n. */
typedef void cx_progress_fn(void *ctx, double done, double total, cx_layer layer, size_t n);

/* Measure the sweep already in me->n (cx_sweep_points) with channels d,
 * kernel k, window r, reps ≤ CX_MAX_REPS repetitions, input and weights
 * from seed; progress may be NULL. Returns 0, or -1 with the reason in err
 * ("out of memory …", or a pass whose count differs from its formula). */
int cx_measure(cx_measurement *me, size_t d, size_t k, size_t r, size_t reps, int clock,
               unsigned long long seed, cx_progress_fn *progress, void *ctx, char *err,
               size_t errlen);

/* The name of a timed layer in messages: "convolution", "recurrent",
 * "self-attention", "restricted". */
const char *cx_layer_label(cx_layer layer);

#endif
