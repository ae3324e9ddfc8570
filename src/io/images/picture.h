/* picture.h — a learner's own image for a Vision Transformer (`attn vit
 * --image FILE`, SPEC.md §16): a PNG or JPEG read with stb_image, made
 * grey (ITU-R BT.601's luma, Pillow's convert("L"); transparency over
 * black, Fashion-MNIST's background), optionally inverted (a dark object
 * on a light page, as photographs are, becomes Fashion-MNIST's light
 * object on black), and resized to S × S as resize.h resizes. */
#ifndef ATTN_PICTURE_H
#define ATTN_PICTURE_H

#include <stddef.h>

/* The image at path as out (S, S) in [0, 1] (malloc'd; free it); *w and
 * *h its size as read. 0, or -1 with "PATH: …" in err. */
int picture_load_grey(const char *path, size_t S, int invert, float **out, size_t *w, size_t *h,
                      char *err, size_t errlen);

#endif
