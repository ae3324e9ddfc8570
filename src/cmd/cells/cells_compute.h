/* cells_compute.h — the outputs of the book's cells, computed by attn's
 * own modules at the cells' sizes (SPEC.md §15, `attn cells`).
 *
 * Each function writes one cell's output to f exactly as the notebook's
 * PyTorch prints it (torch_str.h's tensors, torch.Size, tuples), without
 * a final newline. A shape printed is the shape of the tensor attn
 * computed; a cell of random numbers prints attn's, drawn from seed.
 * 0, or -1 with the reason in err.
 */
#ifndef ATTN_CELLS_COMPUTE_H
#define ATTN_CELLS_COMPUTE_H

#include <stddef.h>
#include <stdio.h>

typedef int cells_fn(FILE *f, unsigned long long seed, char *err, size_t errlen);

/* 10.2 */
cells_fn cells_n_test, cells_bmm_shape, cells_bmm_weights, cells_pool_epochs;
/* 10.3 */
cells_fn cells_masked_softmax_lens, cells_masked_softmax_lens2d, cells_additive, cells_dot;
/* 10.4 */
cells_fn cells_bahdanau_shapes;
/* 10.5, 10.6 */
cells_fn cells_mha_module, cells_mha_cross_shape, cells_mha_self_shape, cells_binary_zh,
    cells_binary_en;
/* 10.7 */
cells_fn cells_ffn, cells_ln_bn, cells_add_norm, cells_encoder_block, cells_encoder,
    cells_decoder_block, cells_enc_weights_shape;

/* d2l.ai's check_shape cells (--edition en) that differ from zh's */
cells_fn cells_en_bmm_shape, cells_en_dot_shape, cells_en_additive_shape,
    cells_en_bahdanau_output, cells_en_bahdanau_enc, cells_en_bahdanau_hidden,
    cells_en_dec_self_shape, cells_en_cross_shape, cells_en_patch_embedding, cells_en_vit_block;

#endif
