/* run_line.c — an attn command line as text, its figures inside a
 * folder (run_line.h): the tour's steps and cells --out. */
#include "run_line.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checked.h"
#include "cli.h"
#include "os.h"

size_t run_line_split(const char *line, char *buf, char **words, size_t max)
{
    size_t n = 0;
    char *w = buf;
    const char *p = line;
    while (*p && n < max) {
        words[n++] = w;
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                *w++ = *p;
            if (*p == '"')
                p++;
        } else {
            for (; *p && *p != ' '; p++)
                *w++ = *p;
        }
        *w++ = '\0';
        while (*p == ' ')
            p++;
    }
    return n;
}

char *run_line_path(const char *dir, const char *name)
{
    size_t ld = strlen(dir), ln = strlen(name), total;
    int slash = ld > 0 && dir[ld - 1] != '/';
    if (size_add(ld, ln, &total) || size_add(total, (size_t)slash + 1, &total))
        return NULL;
    char *s = malloc(total);
    if (!s)
        return NULL;
    memcpy(s, dir, ld);
    if (slash)
        s[ld] = '/';
    memcpy(s + ld + (size_t)slash, name, ln + 1);
    return s;
}

int run_line_folder(const char *dir)
{
    size_t len = strlen(dir);
    char *path = malloc(len + 1);
    struct stat st;
    int rc = EXIT_RUNTIME;
    if (!path) {
        cli_error("--out %s: out of memory", dir);
        return EXIT_RUNTIME;
    }
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char keep = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            cli_error("--out %s: cannot make folder %s: %s", dir, path, strerror(errno));
            goto done;
        }
        path[i] = keep;
    }
    if (stat(dir, &st) != 0) {
        cli_error("--out %s: %s", dir, strerror(errno));
        goto done;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error("--out %s: exists and is not a folder", dir);
        goto done;
    }
    rc = EXIT_OK;
done:
    free(path);
    return rc;
}

int run_line_argv(char **words, size_t nw, const char *out, char **argv, char **owned,
                  size_t *nowned, const char **first_name)
{
    for (size_t i = 0; i < nw; i++) {
        if (words[i][0] == '@') {
            char *path = run_line_path(out, words[i] + 1);
            if (!path) {
                cli_error("--out %s: out of memory", out);
                return EXIT_RUNTIME;
            }
            if (!*first_name)
                *first_name = words[i] + 1;
            owned[(*nowned)++] = path;
            argv[i] = path;
        } else {
            argv[i] = words[i];
        }
    }
    return EXIT_OK;
}


int run_line_capture(int (*run)(int argc, char **argv), int argc, char **argv, const char *what,
                     char **text, size_t *len, int *status)
{
    int saved = -1;
    long n;
    char *buf = NULL;
    fflush(stdout);
    FILE *tmp = os_stdout_to_temp(&saved);
    if (!tmp) {
        cli_error("%s: cannot keep the output of a run: %s", what, strerror(errno));
        return EXIT_RUNTIME;
    }
    *status = run(argc, argv);
    fflush(stdout);
    os_stdout_restore(saved);
    if ((n = ftell(tmp)) < 0 || fseek(tmp, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, tmp) != (size_t)n) {
        free(buf);
        fclose(tmp);
        cli_error("%s: cannot read back the output of a run", what);
        return EXIT_RUNTIME;
    }
    fclose(tmp);
    buf[n] = '\0';
    *text = buf;
    *len = (size_t)n;
    return EXIT_OK;
}
