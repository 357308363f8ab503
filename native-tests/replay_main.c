/* replay_main.c - turns a libFuzzer target (native-tests/fuzz_NAME.c) into a native test: every file of
 * native-tests/fuzz-corpus/NAME (the seeds and what fuzzing kept worth keeping) and NAME-crashes (each input
 * that once crashed, hung or broke an invariant, kept after its fix) goes through the target's entry point.
 * The sanitizers (check-asan) and the target's own checks fail the test; without them an input that corrupts
 * memory usually still crashes. Built with -DFUZZ_NAME="NAME" by the Makefile; extra arguments are files or
 * directories to replay instead (to reproduce one input outside libFuzzer).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"name\""
#endif

/* A target that needs no set-up does not define this. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    return 0;
}

/* Runs the target on the file at path; the count of inputs (1), or 0 if unreadable. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf) abort();
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0) break;
        len += r;
    }
    fclose(f);
    /* an exact-size copy, so reads past the input's end are caught as they would be under libFuzzer */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) abort();
    if (len) memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

/* Replays every regular file of dir (sorted); the count, 0 when dir does not exist. */
static int replay_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort), count = 0;
    if (n < 0) return 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) count += replay_file(path);
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int count = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            struct stat st;
            if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) count += replay_dir(argv[i]);
            else count += replay_file(argv[i]);
        }
        printf("fuzz_%s: %d inputs replayed\n", FUZZ_NAME, count);
        return 0;
    }
    const char *slash = strrchr(__FILE__, '/');
    int dirlen = slash ? (int)(slash - __FILE__ + 1) : 0;
    char seeds[2048], crashes[2048];
    snprintf(seeds, sizeof seeds, "%.*sfuzz-corpus/%s", dirlen, __FILE__, FUZZ_NAME);
    snprintf(crashes, sizeof crashes, "%.*sfuzz-corpus/%s-crashes", dirlen, __FILE__, FUZZ_NAME);
    int s = replay_dir(seeds), c = replay_dir(crashes);
    if (s + c == 0) {
        fprintf(stderr, "fuzz_%s: no corpus in %s\n", FUZZ_NAME, seeds);
        return 1;
    }
    printf("fuzz_%s: %d corpus inputs and %d crash reproducers replayed\n", FUZZ_NAME, s, c);
    return 0;
}
