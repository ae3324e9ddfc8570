/* gunzip.h — a whole gzip file (RFC 1952) inflated into memory: libdeflate
 * in attn (gunzip.c), nothing in the pages' WebAssembly module
 * (gunzip_wasi.c: the pages read no IDX file).
 */
#ifndef ATTN_GUNZIP_H
#define ATTN_GUNZIP_H

#include <stddef.h>

/* *out (malloc'd, *out_len bytes) ← the data of the gzip stream in (len
 * bytes), every member of it. 0, or -1 with "name: not a gzip file …" or
 * "out of memory …" in err. */
int gunzip_buffer(unsigned char **out, size_t *out_len, const unsigned char *in, size_t len,
                  const char *name, char *err, size_t errlen);

#endif
