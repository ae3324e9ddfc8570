/* fixture_dir.h — every PyTorch reference file of a folder, in turn: the
 * main of a test that reads tests/ref/NAME/ (test_collapse.c,
 * test_shapes.c). Include after check.h (CHECK).
 */
#ifndef ATTN_FIXTURE_DIR_H
#define ATTN_FIXTURE_DIR_H

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_in.h"

/* `test FIXTURE_DIR`: run(root, file name) on every *.json file of the
 * folder in alphabetical order; returns how many were read, or -1 after
 * the usage line when the arguments are not one folder. */
static inline int fixture_dir_run(int argc, char **argv, const char *test,
                                  void (*run)(const cJSON *root, const char *name))
{
    struct dirent **list;
    int n, fixtures = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", test);
        return -1;
    }
    n = scandir(argv[1], &list, NULL, alphasort);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        char path[1024], err[256];
        if (strstr(list[i]->d_name, ".json")) {
            snprintf(path, sizeof path, "%s/%s", argv[1], list[i]->d_name);
            cJSON *root = json_read_file(path, (size_t)1 << 24, err, sizeof err);
            CHECK(root != NULL);
            if (root) {
                run(root, list[i]->d_name);
                cJSON_Delete(root);
                fixtures++;
            }
        }
        free(list[i]);
    }
    free(n > 0 ? list : NULL);
    return fixtures;
}

#endif
