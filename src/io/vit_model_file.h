/* vit_model_file.h — a Vision Transformer's model file (`attn train
 * --task vit --save`, SPEC.md §16): the model_json.h object with
 *   "task": "vit", "img_size", "patch_size", "num_hiddens",
 *   "mlp_num_hiddens", "num_heads", "num_blks", "channels", "num_classes",
 *   "labels" (d2l's text_labels), "state_dict" (d2l's names: cls_token,
 *   pos_embedding, patch_embedding.conv.weight, blks.0.ln1.weight, …),
 *   each tensor nested arrays or json_writer's base64 object.
 */
#ifndef ATTN_VIT_MODEL_FILE_H
#define ATTN_VIT_MODEL_FILE_H

#include <stddef.h>

#include "json_writer.h"
#include "vit.h"

/* m to path, atomically. 0, or -1 with "PATH: …" in err. */
int vit_model_save(const char *path, const vit_model *m, const char *const *labels, char *err,
                   size_t errlen);

/* The same object as the member key of jw's open object (a page's data:
 * with jw->base64_from set, its tensors as base64 float32, which
 * vit_model_load reads as well). json_end's result. */
int vit_model_json(json_writer *jw, const char *key, const vit_model *m,
                   const char *const *labels);

/* The model at path ("-": standard input) into m (vit_init'd here: vit_free it). 0, or -1 with
 * "PATH: $.…: …" in err. */
int vit_model_load(const char *path, vit_model *m, char *err, size_t errlen);

#endif
