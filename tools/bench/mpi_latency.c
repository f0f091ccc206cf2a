/* mpi-latency: what one message costs between two ranks, for the model in
 * docs/distributed.md. Under `mpirun -np 2`, rank 0 and rank 1 bounce a
 * message back and forth, for each size the renderer sends: a tile request
 * (4 bytes), its answer (8), a 32x32 tile of float RGBA (16 KiB) and a
 * 640x480 image's worth (4.7 MiB). Prints, per size, the median one-way
 * time of `--rounds` round trips in batches, and the bandwidth it implies. */
#include "tool.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char tool_prog[] = "mpi-latency"; /* tool.h: its messages' prefix */

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {{"rounds", required_argument, NULL, 'r'},
                                             {NULL, 0, NULL, 0}};
    static const tool_cli      cli = {"usage: mpirun -np 2 mpi-latency [--rounds N]\n"
                                           "  --rounds N  round trips per batch of a small message "
                                           "(default 2000)\n",
                                      longopts, NULL};
    int                        rounds = 2000, c, rank, size;
    /* Before MPI starts: --help and --version need no ranks. */
    while ((c = tool_getopt(argc, argv, &cli)) != -1)
        if (c == 'r')
            rounds = (int)tool_parse_u64(optarg, "--rounds", 1000000);
    if (optind != argc)
        tool_usage_error(&cli);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi-latency: run it as mpirun -np 2 mpi-latency\n");
        MPI_Finalize();
        return 2;
    }
    static const struct {
        const char *what;
        int         bytes;
    } sizes[] = {{"tile request", 4},
                 {"tile answer", 8},
                 {"32x32 tile, float RGBA", 32 * 32 * 16},
                 {"640x480 image, float RGBA", 640 * 480 * 16}};
    enum { BATCHES = 21 };
    char *buf = calloc(640 * 480 * 16, 1);
    if (rank == 0)
        printf("%-28s %10s %14s %12s\n", "message", "bytes", "one way (us)", "MB/s");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int    n = sizes[k].bytes > 65536 ? rounds / 100 + 1 : rounds;
        double t[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < n; i++) {
                if (rank == 0) {
                    MPI_Send(buf, sizes[k].bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, sizes[k].bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, sizes[k].bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    MPI_Send(buf, sizes[k].bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            t[b] = (MPI_Wtime() - t0) / (2.0 * n);
        }
        double m = tool_median(t, BATCHES);
        if (rank == 0)
            printf("%-28s %10d %14.2f %12.0f\n", sizes[k].what, sizes[k].bytes, m * 1e6,
                   sizes[k].bytes / m / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
