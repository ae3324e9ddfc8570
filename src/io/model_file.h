/* model_file.h — attn train's model file (--save, --load), SPEC.md §9:
 *
 *   {"command": "train", "vocab": [...], "classes": [...], "num_hiddens": d,
 *    "num_heads": h, "posenc": true, "addnorm": false,
 *    "state_dict": {"embedding.weight": (V, d), "W_q.weight": (d, d), …,
 *                   ["W_q.bias", …], ["addnorm.ln.weight", "addnorm.ln.bias"],
 *                   "head.weight": (C, d), "head.bias": (C,)}}
 *
 * A model with a learned P (d2l.ai 11.8's pos_embedding) says
 * "pos_embedding": "learned" in place of "posenc", and its state_dict
 * starts with "pos_embedding": (1, max_len, d); max_len is read from that
 * shape. A file may also say "pos_embedding": "sinusoid" or "none", with
 * or without an agreeing "posenc".
 *
 * The W_q/W_k/W_v/W_o entries are exactly the state_dict of §4 (d2l's
 * MultiHeadAttention), written as json_out writes every tensor ("%.9g":
 * float32 round-trips exactly).
 */
#ifndef ATTN_MODEL_FILE_H
#define ATTN_MODEL_FILE_H

#include <stdio.h>
#include <stddef.h>

#include "encoder.h"
#include "encoder_task.h"

/* The model as JSON on f: 0, or -1 when the writer refused a call (an
 * internal error). Write errors of the stream are the caller's to check. */
int model_file_write(FILE *f, const tmodel *m, const char *const *vocab,
                     const char *const *classes);

/* Write atomically to path: 0, or -1 with "PATH: …" in err. */
int model_file_save(const char *path, const tmodel *m, const char *const *vocab,
                    const char *const *classes, char *err, size_t errlen);

/* A saved model: the parameters into m (allocated here, free with
 * tmodel_free), the vocabulary and classes as owned strings (free each and
 * the array). causal and dropout are not part of the file: they come from
 * cfg_extra. 0, or -1 with "PATH: $.…: …" in err. */
int model_file_load(const char *path, tmodel *m, char ***vocab, size_t *V, char ***classes,
                    size_t *C, int causal, double dropout, char *err, size_t errlen);
/* (Its vocabulary and classes are freed with encoder_task.h's
 * train_strings_free.) */

#endif
