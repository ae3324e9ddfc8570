/* chunks.h — a batch cut into chunks, run in parallel: the trainers'
 * forward and backward passes, evaluations and translations all split
 * their rows into chunks of TRAIN_CHUNK (encoder_train.h) and run one
 * function per chunk on the threads, each chunk writing only its own
 * buffers, so that the result is the same bits for any number of threads.
 * This is that loop, and the collection of a failing chunk's message. */
#ifndef ATTN_CHUNKS_H
#define ATTN_CHUNKS_H

#include <stddef.h>

/* Chunk c of a run: 0, or -1 with the reason in err. */
typedef int chunk_fn(void *ctx, size_t c, char *err, size_t errlen);

/* fn(ctx, c) for c = 0 … n − 1 on nth threads (OpenMP's static schedule;
 * one thread without OpenMP). 0 when every chunk succeeded, else -1 with
 * the message of a failing chunk in err. */
int chunks_run(chunk_fn *fn, void *ctx, size_t n, int nth, char *err, size_t errlen);

#endif
