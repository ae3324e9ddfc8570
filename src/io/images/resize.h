/* resize.h — an image resized as d2l's transforms.Resize resizes
 * Fashion-MNIST (SPEC.md §16, --img-size; `attn vit --image`): bilinear
 * with the triangle filter widened by the scale when the image shrinks
 * (an antialiased bilinear, as Pillow's and torch's interpolate(mode=
 * "bilinear", antialias=True)), separable, pixel centres at (i + 0.5). */
#ifndef ATTN_RESIZE_H
#define ATTN_RESIZE_H

#include <stddef.h>

/* src (sh, sw) into dst (dh, dw), rows first then columns: each output
 * pixel i of a side of n → m reads the source pixels j whose centres lie
 * within s = max(n / m, 1) of its centre c = (i + 0.5) · n / m, weighted
 * by 1 − |j + 0.5 − c| / s and normalised. round8: each pass rounded to
 * the nearest integer in [0, 255], as an 8-bit image is resized (the
 * source then holds 0 … 255). 0, or -1 when memory runs out. */
int image_resize(float *dst, size_t dh, size_t dw, const float *src, size_t sh, size_t sw,
                 int round8);

#endif
