/*
 * sgemm_ref.c: OpenBLAS's single-precision GEMM rate for one shape, the
 * reference column of bench/kernels.sh.
 *
 *   cc -O2 -o sgemm_ref sgemm_ref.c -lopenblas
 *   OPENBLAS_NUM_THREADS=1 ./sgemm_ref M N K [REPS]
 *
 * Times C(MxN) = A(MxK) B(KxN), all row-major, with cblas_sgemm: REPS
 * (default 5) measurements, each repeating the call for at least 0.1 s
 * after two warm-up calls, and prints the best in GFLOP/s (2*M*N*K FLOP
 * per call).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *filled(size_t n, unsigned seed) {
    float *p = malloc(n * sizeof *p);
    if (!p) {
        perror("sgemm_ref");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((seed >> 9) * (1.0 / 8388608.0) - 0.5);
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sgemm_ref M N K [REPS]\n");
        return 2;
    }
    int m = atoi(argv[1]), n = atoi(argv[2]), k = atoi(argv[3]);
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    if (m < 1 || n < 1 || k < 1 || reps < 1) {
        fprintf(stderr, "sgemm_ref: M, N, K and REPS must be positive\n");
        return 2;
    }
    float *a = filled((size_t)m * k, 1), *b = filled((size_t)k * n, 2), *c = filled((size_t)m * n, 3);
    double flop = 2.0 * m * n * k, best = 0;
    for (int i = 0; i < 2; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    for (int r = 0; r < reps; r++) {
        int calls = 0;
        double t0 = now_s(), dt;
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
            calls++;
            dt = now_s() - t0;
        } while (dt < 0.1);
        if (flop * calls / dt / 1e9 > best) best = flop * calls / dt / 1e9;
    }
    printf("%.1f\n", best);
    free(a);
    free(b);
    free(c);
    return 0;
}
