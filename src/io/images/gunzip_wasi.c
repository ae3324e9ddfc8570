/* gunzip_wasi.c — gunzip.h in the pages' WebAssembly module, which reads
 * no IDX file (and links no libdeflate): always an error. */
#include "gunzip.h"
#include "i18n.h"

#include <stdio.h>

int gunzip_buffer(unsigned char **out, size_t *out_len, const unsigned char *in, size_t len,
                  const char *name, char *err, size_t errlen)
{
    (void)in;
    (void)len;
    *out = NULL;
    *out_len = 0;
    snprintf(err, errlen, _("%s: gzip files are read by attn, not by the page"), name);
    return -1;
}
