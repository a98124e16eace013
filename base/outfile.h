/*
** outfile.h: the one way the toolchain writes a file.
**
** Every output (a compiled .so, its header, IR dumps, .npy outputs, inspect
** reports, scratch files) is written into a new temporary file in the
** target's folder, created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC
** under a random name, mode 0600 while it is written), given its mode with
** fchmod (0644, or 0755 for an executable, less the umask), and renamed over
** the target.  Readers see the old file or the new one, never a part; a
** failure leaves the old file as it was and no temporary file behind.
**
** The output path itself is checked first: a symbolic link there is refused,
** never followed nor replaced, and so is anything that exists and is not a
** regular file (a directory, device, FIFO or socket).  The folders leading
** to it are taken as the caller spelled them.  mlc_out_same_file tells
** whether two paths name one file, so callers refuse to write over their
** inputs; mlc_out_mkdir makes an output directory with the same rules.
*/
#ifndef MLC_BASE_OUTFILE_H
#define MLC_BASE_OUTFILE_H

#include <limits.h>
#include <stddef.h>

#include "base/status.h"

/* Flags of mlc_out_open. */
enum {
  MLC_OUT_EXEC = 1 /* mode 0755 less the umask (default: 0644 less the umask) */
};

/* An output being written; fields private to outfile.c. */
typedef struct mlc_outfile {
  int dirfd;          /* the target's folder, -1 when closed */
  int fd;             /* the temporary file, -1 when closed */
  unsigned flags;
  const char *base;   /* the target's name in its folder (points into path) */
  char tmp[80];       /* the temporary file's name in its folder */
  char path[PATH_MAX]; /* the target as given, for messages */
} mlc_outfile;

/*
** Checks that |path| (borrowed) may be written: it does not exist, or is a
** regular file.  A symbolic link, a directory, device, FIFO or socket, and
** a path that ends in '/', "." or ".." are MLC_INVALID_ARGUMENT errors
** naming |path| (transferred); an lstat failure other than "no such file"
** is MLC_IO_ERROR.
*/
MLC_MUST_USE mlc_status mlc_out_check(const char *path);

/*
** Whether |a| and |b| (borrowed) name the same file: for two files that
** exist, the same device and inode (so another spelling, "d/../x", or a
** hard link is caught; symbolic links are followed); for two that do not,
** the same name in the same folder.  0 when exactly one exists.
*/
int mlc_out_same_file(const char *a, const char *b);

/*
** Starts writing |path| (copied): checks it (mlc_out_check) and creates the
** temporary file beside it.  On success |f| must be finished with
** mlc_out_commit or mlc_out_abort; on error |f| holds nothing.
*/
MLC_MUST_USE mlc_status mlc_out_open(mlc_outfile *f, const char *path, unsigned flags);

/* Appends |n| bytes of |data| (borrowed) to |f|. */
MLC_MUST_USE mlc_status mlc_out_write(mlc_outfile *f, const void *data, size_t n);

/*
** Sets the temporary file's mode, closes it and renames it over the target.
** |f| is finished either way: on error the temporary file is removed and
** the target is as it was.
*/
MLC_MUST_USE mlc_status mlc_out_commit(mlc_outfile *f);

/* Removes the temporary file and releases |f|; the target is untouched.
** Safe on a finished |f|. */
void mlc_out_abort(mlc_outfile *f);

/* mlc_out_open, mlc_out_write of |n| bytes of |data|, mlc_out_commit. */
MLC_MUST_USE mlc_status mlc_out_write_file(const char *path, const void *data, size_t n,
                                           unsigned flags);

/*
** Creates directory |dir| (borrowed) for output files, and its missing
** parents, with mode 0755 less the umask; an existing directory is fine.
** |dir| itself must not be a symbolic link (MLC_INVALID_ARGUMENT), nor exist
** as anything but a directory; existing parents are taken as given.
*/
MLC_MUST_USE mlc_status mlc_out_mkdir(const char *dir);

#endif /* MLC_BASE_OUTFILE_H */
