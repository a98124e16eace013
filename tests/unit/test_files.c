/*
** test_files.c: CUnit suites for the files the toolchain writes
** (base/outfile.c, and mlc_file_write / mlc_dir_create of mlc.h) and for
** the linker spawn of driver/archive.c (mlc_drv_spawn).
*/
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/outfile.h"
#include "driver/driver_int.h"
#include "tests/testutil.h"

static char *dir; /* a fresh directory per test */
static char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX];

static const char *at(char *buf, const char *name) {
  snprintf(buf, PATH_MAX, "%s/%s", dir, name);
  return buf;
}

/* Whether |path| holds exactly the string |want|. */
static int holds(const char *path, const char *want) {
  size_t n = 0;
  char *got = mlc_test_read_file(path, &n);
  int same = got && n == strlen(want) && memcmp(got, want, n) == 0;
  free(got);
  return same;
}

/* Number of entries of |d| (besides . and ..), and how many end in ".tmp". */
static int entries(const char *d, int *tmps) {
  char cmd[PATH_MAX + 64];
  int n = 0;
  *tmps = 0;
  snprintf(cmd, sizeof cmd, "ls -A '%s'", d);
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    n++;
    size_t len = strcspn(line, "\n");
    if (len >= 4 && !strncmp(line + len - 4, ".tmp", 4)) (*tmps)++;
  }
  pclose(f);
  return n;
}

static void setup(void) {
  dir = mlc_test_tmpdir();
  if (!dir) abort(); /* no directory to test in */
}

static void teardown(void) {
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CU_ASSERT_EQUAL(system(cmd), 0);
  free(dir);
}

static void test_new_and_replace(void) {
  int tmps;
  MLC_TEST_OK(mlc_out_write_file(at(p1, "a.txt"), "hello", 5, 0));
  CU_ASSERT(holds(p1, "hello"));
  struct stat st0, st1;
  CU_ASSERT_EQUAL(stat(p1, &st0), 0);
  CU_ASSERT_EQUAL(link(p1, at(p2, "old.txt")), 0);
  /* replacing: a new file takes the name; the old one is not rewritten */
  MLC_TEST_OK(mlc_out_write_file(p1, "hi", 2, 0));
  CU_ASSERT(holds(p1, "hi"));
  CU_ASSERT(holds(p2, "hello"));
  CU_ASSERT_EQUAL(stat(p1, &st1), 0);
  CU_ASSERT_NOT_EQUAL(st0.st_ino, st1.st_ino);
  MLC_TEST_OK(mlc_out_write_file(p1, "", 0, 0));
  CU_ASSERT(holds(p1, ""));
  CU_ASSERT_EQUAL(entries(dir, &tmps), 2);
  CU_ASSERT_EQUAL(tmps, 0);
}

static void test_streaming_and_abort(void) {
  int tmps;
  mlc_outfile f;
  MLC_TEST_OK(mlc_out_write_file(at(p1, "b.bin"), "old", 3, 0));
  MLC_TEST_OK(mlc_out_open(&f, p1, 0));
  CU_ASSERT_EQUAL(entries(dir, &tmps), 2);
  CU_ASSERT_EQUAL(tmps, 1);
  MLC_TEST_OK(mlc_out_write(&f, "new ", 4));
  CU_ASSERT(holds(p1, "old")); /* nothing shows before the commit */
  MLC_TEST_OK(mlc_out_write(&f, "content", 7));
  mlc_out_abort(&f);
  mlc_out_abort(&f); /* safe twice */
  CU_ASSERT(holds(p1, "old"));
  CU_ASSERT_EQUAL(entries(dir, &tmps), 1);
  CU_ASSERT_EQUAL(tmps, 0);
  MLC_TEST_OK(mlc_out_open(&f, p1, 0));
  MLC_TEST_OK(mlc_out_write(&f, "new ", 4));
  MLC_TEST_OK(mlc_out_write(&f, "content", 7));
  MLC_TEST_OK(mlc_out_commit(&f));
  CU_ASSERT(holds(p1, "new content"));
  CU_ASSERT_EQUAL(entries(dir, &tmps), 1);
  CU_ASSERT_EQUAL(tmps, 0);
}

static void test_refusals(void) {
  int tmps;
  /* a link to a file, a dangling link, a FIFO, a directory */
  CU_ASSERT_EQUAL(mlc_test_write_file(at(p1, "victim"), "precious", 8), 0);
  CU_ASSERT_EQUAL(symlink(p1, at(p2, "link")), 0);
  MLC_TEST_ERR(mlc_out_write_file(p2, "x", 1, 0), MLC_INVALID_ARGUMENT, p2, "is a symbolic link");
  MLC_TEST_ERR(mlc_out_write_file(p2, "x", 1, MLC_OUT_EXEC), MLC_INVALID_ARGUMENT, "symbolic link");
  CU_ASSERT(holds(p1, "precious"));
  struct stat st;
  CU_ASSERT(lstat(p2, &st) == 0 && S_ISLNK(st.st_mode));
  CU_ASSERT_EQUAL(symlink(at(p3, "nowhere"), at(p2, "dangling")), 0);
  MLC_TEST_ERR(mlc_out_write_file(p2, "x", 1, 0), MLC_INVALID_ARGUMENT, "is a symbolic link");
  CU_ASSERT_EQUAL(access(p3, F_OK), -1);
  CU_ASSERT_EQUAL(mkfifo(at(p2, "fifo"), 0600), 0);
  MLC_TEST_ERR(mlc_out_write_file(p2, "x", 1, 0), MLC_INVALID_ARGUMENT, p2, "is a FIFO, not a regular file");
  CU_ASSERT(lstat(p2, &st) == 0 && S_ISFIFO(st.st_mode));
  CU_ASSERT_EQUAL(mkdir(at(p2, "sub"), 0755), 0);
  MLC_TEST_ERR(mlc_out_write_file(p2, "x", 1, 0), MLC_INVALID_ARGUMENT, "is a directory");
  MLC_TEST_ERR(mlc_out_write_file("/dev/null", "x", 1, 0), MLC_INVALID_ARGUMENT, "/dev/null",
               "is a character device");
  CU_ASSERT(lstat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  MLC_TEST_ERR(mlc_out_write_file(at(p2, "sub/"), "x", 1, 0), MLC_INVALID_ARGUMENT, "names a directory");
  MLC_TEST_ERR(mlc_out_write_file(at(p2, "sub/.."), "x", 1, 0), MLC_INVALID_ARGUMENT, "names a directory");
  MLC_TEST_ERR(mlc_out_write_file("", "x", 1, 0), MLC_INVALID_ARGUMENT, "empty");
  MLC_TEST_ERR(mlc_out_write_file(at(p2, "nodir/x"), "x", 1, 0), MLC_IO_ERROR, "cannot create", "nodir");
  CU_ASSERT_EQUAL(entries(dir, &tmps), 5);
  CU_ASSERT_EQUAL(tmps, 0);
}

/* A link planted at the target after the check is refused at the commit:
** neither followed nor replaced, and the temporary file is removed. */
static void test_planted_during_write(void) {
  int tmps;
  mlc_outfile f;
  CU_ASSERT_EQUAL(mlc_test_write_file(at(p1, "victim"), "precious", 8), 0);
  MLC_TEST_OK(mlc_out_open(&f, at(p2, "out"), 0));
  MLC_TEST_OK(mlc_out_write(&f, "data", 4));
  CU_ASSERT_EQUAL(symlink(p1, p2), 0);
  MLC_TEST_ERR(mlc_out_commit(&f), MLC_INVALID_ARGUMENT, "is a symbolic link");
  CU_ASSERT(holds(p1, "precious"));
  struct stat st;
  CU_ASSERT(lstat(p2, &st) == 0 && S_ISLNK(st.st_mode));
  CU_ASSERT_EQUAL(entries(dir, &tmps), 2);
  CU_ASSERT_EQUAL(tmps, 0);
}

static void test_modes(void) {
  struct stat st;
  mode_t old = umask(027);
  MLC_TEST_OK(mlc_out_write_file(at(p1, "lib.so"), "x", 1, MLC_OUT_EXEC));
  MLC_TEST_OK(mlc_out_write_file(at(p2, "lib.h"), "x", 1, 0));
  CU_ASSERT(stat(p1, &st) == 0 && (st.st_mode & 07777) == 0750);
  CU_ASSERT(stat(p2, &st) == 0 && (st.st_mode & 07777) == 0640);
  umask(0);
  MLC_TEST_OK(mlc_out_write_file(p1, "x", 1, MLC_OUT_EXEC));
  MLC_TEST_OK(mlc_out_write_file(p2, "x", 1, 0));
  CU_ASSERT(stat(p1, &st) == 0 && (st.st_mode & 07777) == 0755);
  CU_ASSERT(stat(p2, &st) == 0 && (st.st_mode & 07777) == 0644);
  umask(old);
}

static void test_same_file(void) {
  char q[PATH_MAX];
  CU_ASSERT_EQUAL(mlc_test_write_file(at(p1, "m.onnx"), "model", 5), 0);
  CU_ASSERT_EQUAL(mkdir(at(p2, "d"), 0755), 0);
  CU_ASSERT(mlc_out_same_file(p1, p1));
  CU_ASSERT(mlc_out_same_file(at(q, "d/../m.onnx"), p1));
  CU_ASSERT(mlc_out_same_file(at(q, "./d/./../m.onnx"), p1));
  CU_ASSERT_EQUAL(link(p1, at(p3, "hard.so")), 0);
  CU_ASSERT(mlc_out_same_file(p3, p1));
  CU_ASSERT_EQUAL(symlink(p1, at(p3, "soft.so")), 0);
  CU_ASSERT(mlc_out_same_file(p3, p1));
  CU_ASSERT(!mlc_out_same_file(at(q, "other.so"), p1));
  CU_ASSERT(!mlc_out_same_file(p1, at(q, "other.so")));
  /* neither exists: the same name in the same folder */
  at(p2, "new.so");
  CU_ASSERT(mlc_out_same_file(p2, at(q, "d/../new.so")));
  CU_ASSERT(!mlc_out_same_file(p2, at(q, "d/new.so")));
  CU_ASSERT(!mlc_out_same_file(p2, at(q, "new.h")));
  CU_ASSERT(!mlc_out_same_file(NULL, p2));
  /* the public entry refuses to write over its input */
  MLC_TEST_ERR(mlc_file_write(at(q, "d/../hard.so"), "x", 1, p1), MLC_INVALID_ARGUMENT,
               "is the same file as the input");
  CU_ASSERT(holds(p1, "model"));
  MLC_TEST_OK(mlc_file_write(at(q, "report.txt"), "x", 1, p1));
  CU_ASSERT(holds(q, "x"));
}

static void test_mkdir(void) {
  struct stat st;
  mode_t old = umask(022);
  MLC_TEST_OK(mlc_out_mkdir(at(p1, "a/b//c/")));
  CU_ASSERT(stat(at(p2, "a/b/c"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0755);
  MLC_TEST_OK(mlc_out_mkdir(p1)); /* exists: fine */
  MLC_TEST_OK(mlc_dir_create(p2));
  CU_ASSERT_EQUAL(symlink(p2, at(p3, "link")), 0);
  MLC_TEST_ERR(mlc_out_mkdir(p3), MLC_INVALID_ARGUMENT, p3, "is a symbolic link");
  MLC_TEST_ERR(mlc_dir_create(at(p3, "link/")), MLC_INVALID_ARGUMENT, "is a symbolic link");
  MLC_TEST_OK(mlc_out_mkdir(at(p3, "link/sub"))); /* a link above the directory is taken as given */
  CU_ASSERT(stat(at(p3, "a/b/c/sub"), &st) == 0 && S_ISDIR(st.st_mode));
  CU_ASSERT_EQUAL(mlc_test_write_file(at(p3, "file"), "x", 1), 0);
  MLC_TEST_ERR(mlc_out_mkdir(p3), MLC_INVALID_ARGUMENT, "exists and is a regular file");
  MLC_TEST_ERR(mlc_out_mkdir(at(p3, "file/sub")), MLC_IO_ERROR, "cannot create directory");
  MLC_TEST_ERR(mlc_out_mkdir(""), MLC_INVALID_ARGUMENT, "empty");
  umask(old);
}

/* ---- mlc_drv_spawn ---------------------------------------------------------------- */

static const char *start_cwd;
static volatile int spawning;
static int cwd_moved;

/* Watches the process's working directory while the main thread spawns. */
static void *watch_cwd(void *arg) {
  (void)arg;
  char buf[PATH_MAX];
  while (spawning)
    if (!getcwd(buf, sizeof buf) || strcmp(buf, start_cwd) != 0) cwd_moved++;
  return NULL;
}

static void test_spawn(void) {
  char here[PATH_MAX], real[PATH_MAX];
  CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(here, sizeof here));
  CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(dir, real));
  const char *const pwd[] = {"sh", "-c", "pwd; echo to-stderr >&2", NULL};
  MLC_TEST_OK(mlc_drv_spawn(pwd, dir, at(p1, "log")));
  char want[PATH_MAX + 32];
  snprintf(want, sizeof want, "%s\nto-stderr\n", real);
  CU_ASSERT(holds(p1, want));
  CU_ASSERT(getcwd(real, sizeof real) && strcmp(real, here) == 0);
  /* in the caller's directory without |cwd| */
  MLC_TEST_OK(mlc_drv_spawn(pwd, NULL, p1));
  snprintf(want, sizeof want, "%s\nto-stderr\n", here);
  CU_ASSERT(holds(p1, want));
  /* a failing command: its status and the log's tail */
  const char *const bad[] = {"sh", "-c", "echo what went wrong; exit 3", NULL};
  MLC_TEST_ERR(mlc_drv_spawn(bad, dir, p1), MLC_INTERNAL, "exit status 3", "what went wrong");
  const char *const none[] = {"no-such-command-here", NULL};
  MLC_TEST_ERR(mlc_drv_spawn(none, dir, p1), MLC_NOT_FOUND, "cannot run no-such-command-here");
  /* the log is never written through a link */
  CU_ASSERT_EQUAL(mlc_test_write_file(at(p2, "victim"), "precious", 8), 0);
  CU_ASSERT_EQUAL(symlink(p2, at(p3, "log.link")), 0);
  MLC_TEST_ERR(mlc_drv_spawn(pwd, dir, p3), MLC_IO_ERROR, "log.link");
  CU_ASSERT(holds(p2, "precious"));
}

/* Another thread never sees the working directory change while a child is
** started in another directory. */
static void test_spawn_keeps_cwd(void) {
  char here[PATH_MAX];
  CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(here, sizeof here));
  start_cwd = here;
  cwd_moved = 0;
  spawning = 1;
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, watch_cwd, NULL), 0);
  const char *const t[] = {"true", NULL};
  for (int i = 0; i < 50; i++) MLC_TEST_OK(mlc_drv_spawn(t, dir, at(p1, "log")));
  spawning = 0;
  pthread_join(th, NULL);
  CU_ASSERT_EQUAL(cwd_moved, 0);
}

static CU_TestInfo outfile_tests[] = {
    {"new and replace", test_new_and_replace},
    {"streaming and abort", test_streaming_and_abort},
    {"refusals", test_refusals},
    {"link planted during the write", test_planted_during_write},
    {"modes", test_modes},
    {"same file", test_same_file},
    {"mkdir", test_mkdir},
    CU_TEST_INFO_NULL};

static CU_TestInfo spawn_tests[] = {
    {"spawn", test_spawn},
    {"spawn keeps the working directory", test_spawn_keeps_cwd},
    CU_TEST_INFO_NULL};

/* Each test gets a fresh directory. */
static void reg(void) {
  CU_pSuite s = CU_add_suite_with_setup_and_teardown("outfile", NULL, NULL, setup,
                                                     teardown);
  for (const CU_TestInfo *t = outfile_tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
  s = CU_add_suite_with_setup_and_teardown("spawn", NULL, NULL, setup, teardown);
  for (const CU_TestInfo *t = spawn_tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  const mlc_test_register_fn fns[] = {reg, NULL};
  return mlc_test_main("test_files", fns);
}
