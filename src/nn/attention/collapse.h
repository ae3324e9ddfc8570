/* collapse.h — what stacking self-attention does (d2l 10.6's exercise):
 * the same layer applied again and again, and how far its tokens still
 * are from being one vector. Dimensions as in attention.h (B, N, H).
 *
 * One layer, three ways, with the same weights at every depth:
 *   attention      X ← MHA(X, X, X)
 *   residual       X ← X + MHA(X, X, X)
 *   add & norm     X ← LayerNorm(X + MHA(X, X, X))   d2l's AddNorm, dropout
 *                  off, LayerNorm's weight 1 and bias 0 (its initial values)
 *
 * Two measures of one example's tokens X (N, H), x̄ their mean (H,):
 *   spread    (1/N) Σ_i |x_i − x̄|                the mean distance from
 *             the mean token (in X's units; 0 when all tokens are equal)
 *   residual  |X − 1·x̄ᵀ|_F / |X|_F               the relative distance of X
 *             from the matrix whose every row is x̄, its best approximation
 *             by one repeated row (Dong et al. 2021's res(X), in the
 *             Frobenius norm): scale-free, 0 for identical tokens, 1 when
 *             the mean token is 0; 0 also when X is all zeros
 */
#ifndef ATTN_COLLAPSE_H
#define ATTN_COLLAPSE_H

#include <stddef.h>

#include "attention.h"

enum collapse_kind { COLLAPSE_ATTENTION, COLLAPSE_RESIDUAL, COLLAPSE_ADDNORM, COLLAPSE_KINDS };

/* The names of the kinds, in their order: "attention", "residual",
 * "addnorm". */
extern const char *const collapse_names[COLLAPSE_KINDS];

/* One example's spread and residual (above), in double, from X (N, H);
 * mean (H,) receives x̄. */
void collapse_measure(const float *X, size_t N, size_t H, double *mean, double *spread,
                      double *residual);

/* One layer of the given kind: out (B, N, H) from X (B, N, H), queries =
 * keys = values = X, masks as mask says (NULL: none), in eval mode, by the
 * reference loops (mha_forward). out may not be X. Returns 0, or -1 with
 * "out of memory …" in err. */
int collapse_layer(float *out, const float *X, size_t B, size_t N, const mha_params *m,
                   const mha_masks *mask, enum collapse_kind kind, char *err, size_t errlen);

#endif
