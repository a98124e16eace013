/*
** harness_sched.h: numerical checks of schedules.
**
** mlc_th_sched_same compiles a function and its scheduled form (the same
** parameters, static shapes) side by side, runs both on the same seeded
** random contents of every parameter buffer and compares every parameter
** afterwards (outputs, and inputs that must stay unchanged): a schedule
** must not change what a function computes.  Floats compare with a
** tolerance (reassociated sums), integers exactly.
*/
#ifndef MLC_TESTS_HARNESS_SCHED_H
#define MLC_TESTS_HARNESS_SCHED_H

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lower/tir.h"

/* The number of differing elements (0: same), or -1 when the functions
** could not be built or run (a CUnit assertion has failed then).  |ref| and
** |got| are borrowed functions of |m| (not necessarily added to it); |name|
** names the case in messages.  Must run between mlc_th_kernel_init and
** mlc_th_kernel_clean. */
int64_t mlc_th_sched_same(mlc_tir_module *m, const mlc_tir_func *ref, const mlc_tir_func *got, const char *name);

/* The same without asserting that nothing differs (for tests of the check
** itself); -1 still asserts. */
int64_t mlc_th_sched_diff(mlc_tir_module *m, const mlc_tir_func *ref, const mlc_tir_func *got, const char *name);

/* The seeds' mm_relu over n x n float32 matrices (Y = A @ B in an
** allocated buffer, C = relu(Y)), built with the TIR builders in |m|
** (not added to it); NULL on oom. */
mlc_tir_func *mlc_th_mm_relu(mlc_tir_module *m, int64_t n);

/* ---- text helpers of the schedule tests ------------------------------------ */

struct mlc_sch;
/* A new empty TIR module, or NULL after a failed assertion. */
mlc_tir_module *mlc_th_tir_module(void);
/* |f| / the trace of |s| printed (malloc'd; free it). */
char *mlc_th_print_func(const mlc_tir_func *f);
char *mlc_th_print_trace(const struct mlc_sch *s);
/* Asserts that two strings are equal, printing both when not. */
#define MLC_TH_EXPECT_STR(got, want)                                           \
  do {                                                                         \
    const char *g_ = (got), *w_ = (want);                                      \
    if (strcmp(g_, w_) != 0) printf("\n--- expected\n%s--- got\n%s", w_, g_); \
    CU_ASSERT_STRING_EQUAL(g_, w_);                                            \
  } while (0)

#endif /* MLC_TESTS_HARNESS_SCHED_H */
