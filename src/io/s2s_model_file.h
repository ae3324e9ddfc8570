/* s2s_model_file.h — a translation model as JSON (SPEC.md §11, --arch
 * transformer), the model of seq2seq.h:
 *
 *   {"command": "train", "task": "translate", "arch": "transformer",
 *    "src_vocab": ["<unk>", "<pad>", "<bos>", "<eos>", …],
 *    "tgt_vocab": ["<unk>", "<pad>", "<bos>", "<eos>", …],
 *    "num_hiddens": d, "num_heads": NH, "num_layers": L,
 *    "ffn_num_hiddens": H, "num_steps": T, ["seed": N,]
 *    "state_dict": {"encoder.embedding.weight": (Vs, d), …,
 *                   "decoder.dense.weight": (Vt, d), "decoder.dense.bias": (Vt,)}}
 *
 * The state_dict holds exactly the keys of zh.d2l.ai's EncoderDecoder(
 * TransformerEncoder, TransformerDecoder) in its state_dict() order, so
 * that PyTorch loads it with load_state_dict(strict=True)
 * (scripts/gen_seq2seq_ref.py --load); the attentions' ".bias" keys are
 * there when the model has biases (--bias), and tell the reader so. Each
 * tensor is written as json_tensor writes it ("%.9g": float32 round-trips
 * exactly). "seed", when the model learned the built-in task's pairs
 * (m->has_seed), is the --seed they were drawn from: attn translate
 * --head-importance draws the same held-out pairs from it. The
 * vocabularies are d2l's Vocab: <unk>, <pad>, <bos>, <eos>,
 * then the tokens, each once.
 */
#ifndef ATTN_S2S_MODEL_FILE_H
#define ATTN_S2S_MODEL_FILE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "seq2seq.h"

/* The model as JSON on f (src_vocab of m->cfg.src_vocab strings, tgt_vocab
 * of m->cfg.tgt_vocab): 0, or -1 when the writer refused a call (an
 * internal error). Write errors of the stream are the caller's to check. */
int s2s_model_write(FILE *f, const s2s_model *m, const char *const *src_vocab,
                    const char *const *tgt_vocab, size_t num_steps);

/* Write atomically to path: 0, or -1 with "PATH: …" in err. */
int s2s_model_save(const char *path, const s2s_model *m, const char *const *src_vocab,
                   const char *const *tgt_vocab, size_t num_steps, char *err, size_t errlen);

/* A model read from a parsed file: the configuration (dropout as given:
 * it is not part of the file), every parameter into m (allocated here,
 * free with s2s_free), the vocabularies as owned strings (free with
 * encoder_task.h's train_strings_free), num_steps. Every key checked: a
 * missing, unknown or misshapen one is an error naming its JSON path,
 * e.g. `$.state_dict["decoder.dense.bias"]: expected shape (12), got
 * (11)`. 0, or -1 with the message in err (then nothing to free). */
int s2s_model_from_json(const cJSON *root, s2s_model *m, char ***src_vocab, char ***tgt_vocab,
                        size_t *num_steps, double dropout, char *err, size_t errlen);

/* The same from a file: errors as "PATH: $.…: …". */
int s2s_model_load(const char *path, s2s_model *m, char ***src_vocab, char ***tgt_vocab,
                   size_t *num_steps, double dropout, char *err, size_t errlen);

#endif
