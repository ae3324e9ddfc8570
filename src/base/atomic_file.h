/* atomic_file.h — output files written whole or not at all (SPEC §2:
 * a failed run leaves no partial file and leaves an existing file
 * untouched). */
#ifndef ATTN_ATOMIC_FILE_H
#define ATTN_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* An output file written atomically: a temporary file in the same folder,
 * renamed over the target only when everything was written. The path "-"
 * means standard output (written directly; main checks it at exit); a
 * path that is a device or a pipe (/dev/null, /dev/full) is written in
 * place, never replaced. */
typedef struct atomic_file {
    FILE *f;
    char *tmp_path; /* NULL for standard output */
    char *path;
} atomic_file;

/* 0, or -1 with "PATH: cannot create: reason" in err. */
int atomic_open(atomic_file *af, const char *path, char *err, size_t errlen);
/* Flush, check for write errors, close and rename. 0, or -1 with a message
 * in err; on failure the temporary file is removed and any old file at the
 * path is untouched. */
int atomic_commit(atomic_file *af, char *err, size_t errlen);
/* Give up: close and remove the temporary file. */
void atomic_abort(atomic_file *af);

#endif
