/* torch_str.h — a tensor printed as PyTorch prints it: str(t) and repr(t)
 * of torch/_tensor_str.py with the default print options (precision 4,
 * threshold 1000, edgeitems 3, linewidth 80, sci_mode None; the precision
 * may be set), so that attn
 * can print a cell's output with the book's bytes.
 *
 * The rules, as PyTorch applies them:
 *   - one format for every number shown, chosen from the nonzero finite
 *     ones: all whole numbers → "2." (or scientific when the largest is
 *     over 1e8 or over 1000 times the smallest); else four decimals
 *     "2.0000", or scientific "2.0000e+00" when the largest is over 1e8,
 *     over 1000 times the smallest, or the smallest under 1e-4;
 *   - every number right-aligned to the widest one's width;
 *   - "tensor(" then the nested brackets, each level one column further
 *     in; between the blocks of dimension k ≥ 2, k − 1 line breaks;
 *   - a row of a vector broken after as many numbers as fit in 80
 *     columns less its indent;
 *   - over 1000 numbers, only the first and last 3 of each axis longer
 *     than 6, "..." between (and the format chosen from those shown);
 *   - a suffix ("grad_fn=<…>") after ", ", or on a line of its own
 *     (indented 7) when it would pass 80 columns.
 * Integer tensors (int64: torch.tensor([1, 2])) print their values as
 * Python prints ints, with no dtype suffix (int64 is the default).
 *
 * t is row-major (the last index fastest), ndim 0 … TORCH_STR_MAX_DIMS
 * (0: a scalar tensor, one number).
 */
#ifndef ATTN_TORCH_STR_H
#define ATTN_TORCH_STR_H

#include <stddef.h>
#include <stdio.h>

#define TORCH_STR_MAX_DIMS 8

typedef struct torch_str_opts {
    int integer;        /* an integer tensor: the values printed as ints */
    const char *suffix; /* after the values ("grad_fn=<BmmBackward0>"); NULL: none */
    int precision;      /* torch.set_printoptions(precision=…), 1 … 9; 0: PyTorch's 4 */
    /* 1: never the whole-number format "2.": as PyTorch prints the same
     * numbers an ulp from whole. A notebook's float32 sums (torch.bmm of
     * weights 1/6) land an ulp off and print 2.0000, where attn's sums,
     * in double and rounded once, are whole: with decimals they print the
     * book's bytes. */
    int decimals;
} torch_str_opts;

/* Print str(t) to f, without a final newline. o may be NULL (a float
 * tensor without suffix). 0, or -1 when ndim is too large or the size
 * overflows (nothing printed then). */
int torch_str(FILE *f, const float *t, const size_t *shape, size_t ndim, const torch_str_opts *o);

/* Print "torch.Size([2, 1, 6])" to f (no newline). */
void torch_size_str(FILE *f, const size_t *shape, size_t ndim);

#endif
