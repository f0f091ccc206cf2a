/* Runs a fuzz target over files, without libFuzzer: the plain and
 * sanitizer builds replay each target's corpus (fuzz/corpus/TARGET: its
 * seeds and every input that once crashed it) as a ctest. Arguments are
 * files or folders (every regular file in them, in name order; names
 * starting with '.' and README files are skipped). A crash is the failure
 * it would be under libFuzzer; under ASan and UBSan, so is any error they
 * find. Prints which input it is on, so a crash names it. */
#define _DEFAULT_SOURCE /* DT_REG, scandir */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *data = NULL;
    size_t   size = 0, cap = 0, got;
    do {
        if (size == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *more = realloc(data, cap);
            if (!more) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                free(data);
                fclose(f);
                return -1;
            }
            data = more;
        }
        got = fread(data + size, 1, cap - size, f);
        size += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(data);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int
skip(const struct dirent *e)
{
    return e->d_name[0] != '.' && strncmp(e->d_name, "README", 6) != 0;
}

/* Every regular file in `dir`; *count adds how many. */
static int
replay_dir(const char *dir, unsigned *count)
{
    struct dirent **names;
    int             n = scandir(dir, &names, skip, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: %s: cannot list: %s\n", dir, strerror(errno));
        return -1;
    }
    int r = 0;
    for (int i = 0; i < n; i++) {
        char        path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (r == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            r = replay_file(path);
            *count += r == 0;
        }
        free(names[i]);
    }
    free(names);
    return r;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE-OR-FOLDER...\n", argv[0]);
        return 2;
    }
    unsigned count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        int r = S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) : (count++, replay_file(argv[i]));
        if (r != 0)
            return 1;
    }
    printf("replayed %u inputs: no crash\n", count);
    return count ? 0 : 1;
}
