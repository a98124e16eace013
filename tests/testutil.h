/*
** testutil.h: shared helpers for the CUnit suites under tests/.
**
** Each test program registers its suites and calls mlc_test_main, which runs
** them in CUnit's basic mode and ends with the plain summary line
** "<program>: N passed, N failed" that tests/summary.sh adds up.
*/
#ifndef MLC_TESTS_TESTUTIL_H
#define MLC_TESTS_TESTUTIL_H

#include <CUnit/CUnit.h>
#include <stddef.h>

typedef void (*mlc_test_register_fn)(void);

/* Runs the suites registered by |fns| (NULL-terminated). Exit status. */
int mlc_test_main(const char *program, const mlc_test_register_fn *fns);

/* Adds a suite with |tests| ({name, fn}, terminated by {NULL, NULL}). */
void mlc_test_add_suite(const char *name, const CU_TestInfo *tests);

/*
** Returns |p| after recording it where the leak checker sees it until the
** program exits (the last 256 such pointers).  A test passes the objects it
** owns through it, so that one it abandons when a failed assertion ends it
** early (as happens under fault injection) is not reported as a leak: what
** the fault runs look for are the library's own leaks.
*/
void *mlc_test_hold(void *p);

/*
** Fault injection inside a test: mlc_test_fail_alloc(n) with n >= 1 makes
** the |n|th allocation from now on fail (through the allocators that
** MLC_FAIL_ALLOC replaces); mlc_test_fail_alloc(0) disarms it and returns 1
** when that allocation was reached, 0 when not.  Returns -1 (and does
** nothing) when the whole run is already under MLC_FAIL_ALLOC or the
** program has no injectable allocator: the test should then skip its loop.
*/
int mlc_test_fail_alloc(unsigned long long n);

/* $MLC_SRCDIR/|rel| (or ./|rel|) in a static buffer. */
const char *mlc_test_src_path(const char *rel);
/* $MLC_BUILDDIR/|rel| (or ./|rel|) in a static buffer. */
const char *mlc_test_build_path(const char *rel);
/* Reads a whole file (malloc'd, NUL-terminated); NULL on failure. */
char *mlc_test_read_file(const char *path, size_t *out_size);
/* Writes a whole file; 0 ok. */
int mlc_test_write_file(const char *path, const void *data, size_t size);
/* A fresh temporary directory (malloc'd path), removed with what is in it
** when the program exits, unless MLC_KEEP_TEMP is set. */
char *mlc_test_tmpdir(void);
/* Removes |dir| and what is in it, unless MLC_KEEP_TEMP is set. */
void mlc_test_rmtree(const char *dir);

/*
** Status checks (tests/testutil_status.c; needs base/).  MLC_TEST_OK(expr)
** fails the current test when |expr| is an error status, printing its
** message, and evaluates to 1 on success.  MLC_TEST_ERR(expr, code, subs...)
** expects an error (of |code| unless MLC_OK) whose message contains every
** substring.  Both free the status.  MLC_TEST_OK_FATAL(expr) also ends the
** test on an error.
*/
#include "mlc/mlc.h"
int mlc_test_check_ok(mlc_status s, const char *what, const char *file, int line);
void mlc_test_check_err(mlc_status s, const char *file, int line, mlc_code code,
                        const char *const *subs);
#define MLC_TEST_OK(expr) mlc_test_check_ok((expr), #expr, __FILE__, __LINE__)
/* MLC_TEST_OK that ends the test on an error (after freeing the status). */
#define MLC_TEST_OK_FATAL(expr) \
  CU_assertImplementation(MLC_TEST_OK(expr), __LINE__, #expr, __FILE__, "", CU_TRUE)
#define MLC_TEST_ERR(expr, code, ...) \
  mlc_test_check_err((expr), __FILE__, __LINE__, (code), (const char *const[]){__VA_ARGS__, NULL})

#endif /* MLC_TESTS_TESTUTIL_H */
