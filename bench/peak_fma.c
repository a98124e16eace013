/*
** peak_fma.c: the machine's FP32 FMA peak, for hosts where the reference
** probe (peak_gflops.c, which needs AVX-512) does not build.
**
**   cc -O2 -mavx2 -mfma -o peak_fma peak_fma.c -lpthread
**   ./peak_fma [REPS]
**
** Times 12 independent chains of 8-lane FMAs (enough to cover the FMA's
** latency on two pipes, within the 16 ymm registers), and 24 chains of
** 16-lane FMAs when the CPU has AVX-512, on 1 thread and on one thread per
** CPU; prints lines in peak_gflops.c's format, which bench/common.sh reads:
**
**   FMA ymm  threads=1  best   94.9  median   93.3  min   92.6 GFLOP/s  (~31.7 FLOP/cycle/core)  other-procs 0.00 cores
**   est. core clock (dependent add chain): best 2.965  median 2.927 GHz
**
** (other-procs is not measured here: 0.)
*/
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile float sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((noinline, target("avx2,fma"))) static void fma_ymm(long iters) {
  __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
#define DECL(i) __m256 a##i = _mm256_set1_ps(1.0f + (float)(i) * 0.1f);
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, b, c);
#define SUM(i) s = _mm256_add_ps(s, a##i);
  CHAINS(DECL)
  for (long i = 0; i < iters; i++) {
    CHAINS(STEP)
  }
  __m256 s = _mm256_setzero_ps();
  CHAINS(SUM)
  float t[8];
  _mm256_storeu_ps(t, s);
  sink = t[0] + t[7];
}
#undef DECL
#undef STEP
#undef SUM

__attribute__((noinline, target("avx512f"))) static void fma_zmm(long iters) {
  __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
#define DECL(i) __m512 a##i = _mm512_set1_ps(1.0f + (float)(i) * 0.1f), b##i = _mm512_set1_ps(2.0f + (float)(i) * 0.1f);
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, b, c); b##i = _mm512_fmadd_ps(b##i, b, c);
#define SUM(i) s = _mm512_add_ps(s, _mm512_add_ps(a##i, b##i));
  CHAINS(DECL)
  for (long i = 0; i < iters; i++) {
    CHAINS(STEP)
  }
  __m512 s = _mm512_setzero_ps();
  CHAINS(SUM)
  sink = _mm512_reduce_add_ps(s);
}

/* A dependent chain of integer adds: one per cycle, so the clock. */
__attribute__((noinline)) static long add_chain(long iters) {
  long x = 0;
  for (long i = 0; i < iters; i++) __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  return x;
}

typedef struct {
  void (*fn)(long);
  long iters;
  pthread_barrier_t *bar;
} job;

static void *run_job(void *p) {
  job *j = p;
  pthread_barrier_wait(j->bar);
  j->fn(j->iters);
  return NULL;
}

/* GFLOP/s of |fn| (|flop| per iteration) on |nt| threads. */
static double measure(void (*fn)(long), double flop, int nt) {
  long iters = 1;
  for (;;) { /* calibrate: at least 0.1 s on one thread */
    double t = now();
    fn(iters);
    if (now() - t > 0.1) break;
    iters *= 2;
  }
  pthread_t th[256];
  job j[256];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)nt + 1);
  for (int i = 0; i < nt; i++) {
    j[i] = (job){fn, iters, &bar};
    pthread_create(&th[i], NULL, run_job, &j[i]);
  }
  double t = now();
  pthread_barrier_wait(&bar);
  for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
  t = now() - t;
  pthread_barrier_destroy(&bar);
  return flop * (double)iters * nt / t / 1e9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1 || reps > 100) reps = 5;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  if (ncpu > 256) ncpu = 256;
  double ghz[100];
  for (int r = 0; r < reps; r++) {
    long n = 50000000;
    double t = now();
    sink = (float)add_chain(n);
    ghz[r] = 4.0 * (double)n / (now() - t) / 1e9;
  }
  qsort(ghz, (size_t)reps, sizeof ghz[0], cmp);
  double clock = ghz[reps / 2];
  printf("est. core clock (dependent add chain): best %.3f  median %.3f GHz\n", ghz[reps - 1], clock);
  __builtin_cpu_init();
  struct {
    const char *name;
    void (*fn)(long);
    double flop;
    int ok;
  } k[2] = {{"zmm", fma_zmm, 24 * 16 * 2, __builtin_cpu_supports("avx512f")},
            {"ymm", fma_ymm, 12 * 8 * 2, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")}};
  for (int i = 0; i < 2; i++) {
    if (!k[i].ok) continue;
    int threads[2] = {1, ncpu};
    for (int ti = 0; ti < (ncpu > 1 ? 2 : 1); ti++) {
      double v[100];
      for (int r = 0; r < reps; r++) v[r] = measure(k[i].fn, k[i].flop, threads[ti]);
      qsort(v, (size_t)reps, sizeof v[0], cmp);
      printf("FMA %-4s threads=%d  best %8.1f  median %8.1f  min %8.1f GFLOP/s  (~%.1f FLOP/cycle/core)  other-procs "
             "0.00 cores\n",
             k[i].name, threads[ti], v[reps - 1], v[reps / 2], v[0], v[reps - 1] / threads[ti] / clock);
    }
  }
  return 0;
}
