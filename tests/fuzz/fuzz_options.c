/* fuzz_options.c — libFuzzer harness for the commands' option parsing and
 * the runs the options ask for.
 *
 * The input becomes a command and its argv (fuzz_argv.h: words separated
 * by newlines or NULs, kept inside the working folder, --max-mem 2M
 * appended). The command runs in-process, as main() would run it, with
 * standard input and output on /dev/null, in a private temporary
 * folder (entered for the run only) holding two small JSON inputs (in.json for multihead, x.json
 * for selfattn); whatever the run writes there is removed afterwards and
 * the inputs are restored. A sanitizer report, a crash or a leak is a
 * finding; the exit status must be 0, 1 or 2.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attention_fast.h"
#include "cli.h"
#include "commands.h"
#include "fuzz_argv.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[64];
static int fuzz_home = -1; /* libFuzzer's working folder: its paths are relative to it */

static void fuzz_write(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Remove everything in the working folder but the two inputs (a run
 * writes only files there: fuzz_argv.h turns '/' into '_'), then restore
 * the inputs, which a run may have overwritten. */
static void fuzz_clean(void)
{
    DIR *d = opendir(".");
    struct dirent *e;
    if (d) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if (unlink(e->d_name) != 0)
                rmdir(e->d_name);
        }
        closedir(d);
    }
    fuzz_write("in.json", fuzz_in_json);
    fuzz_write("x.json", fuzz_x_json);
}

static void fuzz_remove_dir(void)
{
    if (chdir(fuzz_dir) == 0) {
        fuzz_clean();
        unlink("in.json");
        unlink("x.json");
        if (fchdir(fuzz_home) == 0)
            rmdir(fuzz_dir);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    int fd;
    (void)argc;
    (void)argv;
    snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/attn-fuzz-options-XXXXXX");
    fuzz_home = open(".", O_RDONLY | O_DIRECTORY);
    if (fuzz_home < 0 || !mkdtemp(fuzz_dir) || chdir(fuzz_dir) != 0) {
        perror("fuzz_options: temporary folder");
        abort();
    }
    atexit(fuzz_remove_dir);
    fuzz_clean();
    if (fchdir(fuzz_home) != 0)
        abort();
    /* standard input and output on /dev/null; the commands' error lines
     * go to stderr, which scripts/fuzz silences with -close_fd_mask=3
     * (libFuzzer keeps a copy of it for its own and the sanitizers'
     * reports) */
    fd = open("/dev/null", O_RDWR);
    if (fd < 0) {
        perror("fuzz_options: /dev/null");
        abort();
    }
    dup2(fd, 0);
    dup2(fd, 1);
    close(fd);
    setenv("NO_COLOR", "1", 0);
    attn_set_threads(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int (*const run[])(int, char **) = {cmd_posenc, cmd_multihead, cmd_selfattn,
                                                cmd_complexity};
    fuzz_argv a;
    int cmd = fuzz_split(data, size, &a), status;

    if (cmd < 0)
        return -1; /* not added to the corpus */
    if (chdir(fuzz_dir) != 0)
        abort();
    cli_set_command(fuzz_commands[cmd]);
    status = run[cmd](a.argc, a.argv);
    fflush(stdout);
    clearerr(stdout);
    clearerr(stdin);
    if (status < 0 || status > 2)
        abort(); /* SPEC.md §2: exit status 0, 1 or 2 */
    fuzz_clean();
    if (fchdir(fuzz_home) != 0)
        abort();
    return 0;
}
