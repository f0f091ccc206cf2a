/* texpaths: prints N realistic texture paths, one per line: a strings file
 * for ustring-bench and oiio-ustring-bench (see texpaths.h). */
#include "texpaths.h"
#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

const char tool_prog[] = "texpaths"; /* tool.h: its messages' prefix */

static const char usage_text[] =
    "usage: texpaths [--seed S] N\n"
    "Prints N distinct texture paths, one per line; the same N and S always\n"
    "give the same lines. N is at most 16777216; S defaults to 1.\n";

/* A whole decimal number in [0, UINT64_MAX]; no sign, no trailing junk. */
static int
parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* main: tool_getopt(); --help -> the usage on stdout, exit 0; bad flag or
 * operand -> the usage or a one-line error on stderr, exit 2; write
 * failure -> exit 1. */
int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"seed", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {usage_text, opts, "s:"};
    uint64_t                   seed = 1;
    int                        c;
    while ((c = tool_getopt(argc, argv, &cli)) != -1) {
        switch (c) {
        case 's':
            if (parse_u64(optarg, &seed) != 0)
                tool_bad_usage("--seed: '%s' is not a whole number", optarg);
            break;
        }
    }
    if (argc - optind != 1)
        tool_usage_error(&cli);
    uint64_t n;
    if (parse_u64(argv[optind], &n) != 0 || n > TEXPATH_UNIQUE_MAX)
        tool_bad_usage("N: '%s' is not a whole number in 0..%" PRIu64, argv[optind],
                       TEXPATH_UNIQUE_MAX);

    char buf[TEXPATH_MAX_LEN + 2];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = texpath_make(seed, i, buf, sizeof buf);
        buf[len] = '\n';
        if (fwrite(buf, 1, len + 1, stdout) != len + 1)
            break;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("texpaths: stdout");
        return 1;
    }
    return 0;
}
