/* test_fuzz_regressions.c — the inputs the fuzzers found problems with
 * (tests/fuzz/regressions/), replayed in every build without libFuzzer.
 *
 * usage: test_fuzz_regressions DIR ATTN
 *
 * json-*: the body of the fuzz_json harness (tests/fuzz/fuzz_json.c,
 *   included here): loaded as multihead and selfattn input, run and
 *   written back, in-process, so build-asan's sanitizers check it.
 * options-*: fuzz_options' input format (tests/fuzz/fuzz_argv.h), run as
 *   ATTN COMMAND ARGS… in a temporary folder holding the harness's
 *   in.json and x.json: the exit status must be 0, 1 or 2, with no signal
 *   and no sanitizer report on stderr.
 */
#define ATTN_FUZZ_NO_ENTRY
#include "fuzz/fuzz_json.c"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "fuzz/fuzz_argv.h"

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Empty a folder of files (what a run wrote), non-recursively. */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            rmdir(path);
    }
    closedir(d);
}

/* Run attn on one options input; 0 when it ended as SPEC.md §2 says. */
static int replay_options(const char *name, const uint8_t *data, size_t size, const char *attn,
                          const char *dir)
{
    fuzz_argv a;
    char *argv[FUZZ_MAX_WORDS + 6], errpath[600], *err;
    size_t errsize = 0;
    int i, cmd = fuzz_split(data, size, &a), status, ok;
    pid_t pid;

    if (cmd < 0) {
        fprintf(stderr, "%s: the harness skips this input\n", name);
        return -1;
    }
    empty_dir(dir);
    write_text(dir, "in.json", fuzz_in_json);
    write_text(dir, "x.json", fuzz_x_json);
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    argv[0] = (char *)attn;
    for (i = 0; i < a.argc; i++)
        argv[i + 1] = a.argv[i];
    argv[a.argc + 1] = NULL;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR), efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (null < 0 || efd < 0 || chdir(dir) != 0)
            _exit(127);
        dup2(null, 0);
        dup2(null, 1);
        dup2(efd, 2);
        setenv("NO_COLOR", "1", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        execv(attn, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    err = check_read_file(errpath, &errsize);
    if (err)
        err[errsize] = '\0';
    ok = WIFEXITED(status) && WEXITSTATUS(status) <= 2 && err &&
         !strstr(err, "Sanitizer") && !strstr(err, "runtime error");
    if (!ok) {
        fprintf(stderr, "%s: attn %s …: %s %d\n%s", name, a.argv[0],
                WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), err ? err : "");
    }
    free(err);
    return ok ? 0 : -1;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv)
{
    DIR *d;
    struct dirent *e;
    char *names[1000], tmpdir[] = "/tmp/attn-fuzz-regressions-XXXXXX", path[1024], *attn;
    size_t n = 0, i, njson = 0, noptions = 0;

    /* No font is looked up, whatever the machine has: what is checked
     * (no crash, exit 0-2) must not depend on the fonts installed. */
    unsetenv("ATTN_FONT");
    setenv("ATTN_FONT_SEARCH", "", 1);

    if (argc != 3) {
        fprintf(stderr, "usage: test_fuzz_regressions DIR ATTN\n");
        return 2;
    }
    d = opendir(argv[1]);
    CHECK(d != NULL);
    if (!d)
        return check_summary("fuzz_regressions");
    while ((e = readdir(d)) != NULL && n < sizeof names / sizeof names[0])
        if (strncmp(e->d_name, "json-", 5) == 0 || strncmp(e->d_name, "options-", 8) == 0)
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    CHECK(mkdtemp(tmpdir) != NULL);
    /* the runs start in tmpdir: attn's path made absolute */
    attn = malloc(4096 + strlen(argv[2]) + 2);
    CHECK(attn != NULL);
    if (!attn)
        return check_summary("fuzz_regressions");
    if (argv[2][0] == '/' || !getcwd(attn, 4096))
        strcpy(attn, argv[2]);
    else
        strcat(strcat(attn, "/"), argv[2]);

    for (i = 0; i < n; i++) {
        size_t size = 0;
        unsigned char *data;
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        data = (unsigned char *)check_read_file(path, &size);
        CHECK(data != NULL);
        if (data && names[i][0] == 'j') {
            CHECK(attn_fuzz_json(data, size) == 0);
            njson++;
        } else if (data) {
            int r = replay_options(names[i], data, size, attn, tmpdir);
            CHECK(r == 0);
            noptions++;
        }
        free(data);
        free(names[i]);
    }
    empty_dir(tmpdir);
    rmdir(tmpdir);
    free(attn);
    printf("%zu JSON inputs, %zu option lines\n", njson, noptions);
    return check_summary("fuzz_regressions");
}
