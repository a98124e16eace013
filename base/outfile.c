/*
** outfile.c: writing output files safely (see outfile.h).
**
** The temporary file lives in the target's folder (a rename does not cross
** file systems), opened through a descriptor of that folder so that the
** temporary file and the rename refer to one folder even if its path
** changes meanwhile.  Its name, ".NAME.XXXXXXXXXXXX.tmp" with twelve random
** hex digits, is not predictable, and O_EXCL|O_NOFOLLOW means a file or link
** planted at that name is never opened: another name is tried instead.
*/
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/outfile.h"

/* What |mode| is, for messages about a path that is not a regular file. */
static const char *kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

/* The last component of |path|: after the last '/', "" when it ends in '/'. */
static const char *last_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

mlc_status mlc_out_check(const char *path) {
  if (!path || !*path) return mlc_make_status(MLC_INVALID_ARGUMENT, "empty output path");
  const char *name = last_name(path);
  if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "output %s names a directory, not a file", path);
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return NULL;
    return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", path, strerror(errno));
  }
  if (S_ISLNK(st.st_mode))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "output %s is a symbolic link: refusing to write through it "
                           "(remove it, or name the file it points to)",
                           path);
  if (!S_ISREG(st.st_mode))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "output %s exists and is %s, not a regular file: refusing to replace it",
                           path, kind_name(st.st_mode));
  return NULL;
}

/* Stats the folder of |path| into |st|; 0 on success. */
static int stat_folder(const char *path, struct stat *st) {
  const char *name = last_name(path);
  if (name == path) return stat(".", st);
  if (name == path + 1) return stat("/", st);
  char dir[PATH_MAX];
  size_t n = (size_t)(name - path);
  if (n >= sizeof dir) return -1;
  memcpy(dir, path, n);
  dir[n] = 0;
  return stat(dir, st);
}

int mlc_out_same_file(const char *a, const char *b) {
  if (!a || !b) return 0;
  struct stat sa, sb;
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea || eb) return 0;
  if (strcmp(last_name(a), last_name(b)) != 0) return 0;
  if (stat_folder(a, &sa) != 0 || stat_folder(b, &sb) != 0) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The process's umask, read without changing it (umask(2) can only be read
** by setting it, which races with other threads creating files).  Without
** /proc, 077: the most private answer. */
static mode_t current_umask(void) {
  FILE *f = fopen("/proc/self/status", "re");
  mode_t mask = 077;
  if (!f) return mask;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    unsigned v;
    if (sscanf(line, "Umask: %o", &v) == 1) {
      mask = (mode_t)(v & 0777);
      break;
    }
  }
  fclose(f);
  return mask;
}

/* 48 unpredictable bits (getrandom, else time, pid and a counter mixed). */
static uint64_t random_bits(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r & 0xffffffffffffull;
  static unsigned long counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 32) ^
      (uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
  r ^= r >> 29;
  r *= 0xbf58476d1ce4e5b9ull;
  return (r ^ (r >> 32)) & 0xffffffffffffull;
}

mlc_status mlc_out_open(mlc_outfile *f, const char *path, unsigned flags) {
  f->dirfd = f->fd = -1;
  f->flags = flags;
  f->tmp[0] = 0;
  f->base = f->path;
  MLC_RETURN_IF_ERROR(mlc_out_check(path));
  size_t len = strlen(path);
  if (len >= sizeof f->path) return mlc_make_status(MLC_INVALID_ARGUMENT, "output path too long: %.64s...", path);
  memcpy(f->path, path, len + 1);
  f->base = last_name(f->path);
  char dir[PATH_MAX];
  size_t n = (size_t)(f->base - f->path);
  if (n == 0) {
    strcpy(dir, ".");
  } else {
    memcpy(dir, f->path, n);
    dir[n] = 0;
  }
  f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f->dirfd < 0)
    return mlc_make_status(MLC_IO_ERROR, "cannot write %s: cannot create a file in %s: %s", path, dir,
                           strerror(errno));
  for (int tries = 0; tries < 100; tries++) {
    snprintf(f->tmp, sizeof f->tmp, ".%.48s.%012llx.tmp", f->base, (unsigned long long)random_bits());
    f->fd = openat(f->dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f->fd >= 0 || errno != EEXIST) break;
  }
  if (f->fd < 0) {
    mlc_status s = mlc_make_status(MLC_IO_ERROR, "cannot write %s: cannot create a temporary file in %s: %s",
                                   path, dir, strerror(errno));
    close(f->dirfd);
    f->dirfd = -1;
    f->tmp[0] = 0;
    return s;
  }
  return NULL;
}

mlc_status mlc_out_write(mlc_outfile *f, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t w = write(f->fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", f->path, w < 0 ? strerror(errno) : "no space written");
    p += w;
    n -= (size_t)w;
  }
  return NULL;
}

void mlc_out_abort(mlc_outfile *f) {
  if (f->fd >= 0) close(f->fd);
  if (f->dirfd >= 0 && f->tmp[0]) unlinkat(f->dirfd, f->tmp, 0);
  if (f->dirfd >= 0) close(f->dirfd);
  f->fd = f->dirfd = -1;
  f->tmp[0] = 0;
}

mlc_status mlc_out_commit(mlc_outfile *f) {
  if (f->fd < 0 || f->dirfd < 0) return mlc_make_status(MLC_INTERNAL, "%s: output not open", f->path);
  mode_t mode = (f->flags & MLC_OUT_EXEC ? 0755 : 0644) & ~current_umask();
  mlc_status s = NULL;
  if (fchmod(f->fd, mode) != 0)
    s = mlc_make_status(MLC_IO_ERROR, "cannot write %s: setting its mode: %s", f->path, strerror(errno));
  int rc = close(f->fd);
  f->fd = -1;
  if (!s && rc != 0) s = mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", f->path, strerror(errno));
  /* Look again: what was planted at the target since mlc_out_open is refused
  ** (a rename would replace a link or device, never write through it). */
  struct stat st;
  if (!s && fstatat(f->dirfd, f->base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    s = mlc_out_check(f->path);
  if (!s && renameat(f->dirfd, f->tmp, f->dirfd, f->base) != 0)
    s = mlc_make_status(MLC_IO_ERROR, "cannot write %s: %s", f->path, strerror(errno));
  if (s) {
    mlc_out_abort(f);
    return s;
  }
  close(f->dirfd);
  f->dirfd = -1;
  f->tmp[0] = 0;
  return NULL;
}

mlc_status mlc_out_write_file(const char *path, const void *data, size_t n, unsigned flags) {
  mlc_outfile f;
  MLC_RETURN_IF_ERROR(mlc_out_open(&f, path, flags));
  mlc_status s = mlc_out_write(&f, data, n);
  if (s) {
    mlc_out_abort(&f);
    return s;
  }
  return mlc_out_commit(&f);
}

mlc_status mlc_out_mkdir(const char *dir) {
  if (!dir || !*dir) return mlc_make_status(MLC_INVALID_ARGUMENT, "empty directory path");
  char p[PATH_MAX];
  size_t len = strlen(dir);
  if (len >= sizeof p) return mlc_make_status(MLC_INVALID_ARGUMENT, "directory path too long: %.64s...", dir);
  memcpy(p, dir, len + 1);
  while (len > 1 && p[len - 1] == '/') p[--len] = 0;
  for (char *q = p + 1; *q; q++)
    if (*q == '/' && q[-1] != '/') {
      *q = 0;
      (void)mkdir(p, 0755); /* an existing parent is taken as given; errors show below */
      *q = '/';
    }
  if (mkdir(p, 0755) == 0) return NULL;
  int e = errno;
  struct stat st;
  if (e == EEXIST && lstat(p, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return NULL;
    if (S_ISLNK(st.st_mode))
      return mlc_make_status(MLC_INVALID_ARGUMENT,
                             "output directory %s is a symbolic link: refusing to write into it "
                             "(remove it, or name the directory it points to)",
                             dir);
    return mlc_make_status(MLC_INVALID_ARGUMENT, "output directory %s exists and is %s", dir,
                           kind_name(st.st_mode));
  }
  return mlc_make_status(MLC_IO_ERROR, "cannot create directory %s: %s", dir, strerror(e));
}

/* ---- the public entries (mlc.h) ------------------------------------------ */

mlc_status mlc_file_write(const char *path, const void *data, size_t n, const char *input) {
  MLC_RETURN_IF_ERROR(mlc_out_check(path));
  if (input && mlc_out_same_file(path, input))
    return mlc_make_status(MLC_INVALID_ARGUMENT, "output %s is the same file as the input %s: refusing to overwrite it",
                           path, input);
  return mlc_out_write_file(path, data, n, 0);
}

mlc_status mlc_dir_create(const char *dir) { return mlc_out_mkdir(dir); }
