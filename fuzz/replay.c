/*
** replay.c: runs a fuzz target over files, without libFuzzer.
**
** Builds without --enable-fuzzing link each target with this main, so
** that make check (normal and sanitizer builds) replays the committed seed
** corpus and the regression cases through the same entry the fuzzer calls.
** With arguments it replays those files and folders; without, the folders
** of FUZZ_DIRS (colon-separated, relative to $MLC_SRCDIR).  Every file must
** come back (a crash ends the program before its summary line) and ends
** with "replay_<target>: N passed, 0 failed".
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME (the target's name) must be defined"
#endif
#ifndef FUZZ_DIRS
#define FUZZ_DIRS ""
#endif

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay_%s: cannot open %s\n", FUZZ_NAME, path);
    return -1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "replay_%s: out of memory reading %s\n", FUZZ_NAME, path);
    return -1;
  }
  /* A copy of exactly |n| bytes, so that ASan sees reads past the input. */
  uint8_t *in = malloc(n ? n : 1);
  if (!in) {
    free(buf);
    return -1;
  }
  memcpy(in, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(in, n);
  free(in);
  return 0;
}

static int only_files(const struct dirent *d) { return d->d_name[0] != '.'; }

/* Replays |path|, a file or a folder (its files, sorted, not recursive). */
static void replay(const char *path, int *passed, int *failed) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay_%s: %s not found\n", FUZZ_NAME, path);
    (*failed)++;
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (replay_file(path) == 0)
      (*passed)++;
    else
      (*failed)++;
    return;
  }
  struct dirent **names;
  int n = scandir(path, &names, only_files, alphasort);
  if (n < 0) {
    fprintf(stderr, "replay_%s: cannot list %s\n", FUZZ_NAME, path);
    (*failed)++;
    return;
  }
  for (int i = 0; i < n; i++) {
    size_t len = strlen(path) + 1 + strlen(names[i]->d_name) + 1;
    char *p = malloc(len);
    if (p) {
      snprintf(p, len, "%s/%s", path, names[i]->d_name);
      if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
        if (replay_file(p) == 0)
          (*passed)++;
        else
          (*failed)++;
      }
      free(p);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) replay(argv[i], &passed, &failed);
  } else {
    const char *src = getenv("MLC_SRCDIR");
    char dirs[] = FUZZ_DIRS;
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      size_t len = strlen(src ? src : ".") + 1 + strlen(d) + 1;
      char *p = malloc(len);
      if (!p) return 1;
      snprintf(p, len, "%s/%s", src ? src : ".", d);
      replay(p, &passed, &failed);
      free(p);
    }
  }
  printf("replay_%s: %d passed, %d failed\n", FUZZ_NAME, passed, failed);
  return failed != 0;
}
