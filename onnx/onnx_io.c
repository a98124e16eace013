/*
** onnx_io.c: files, memory and protobuf unpacking for the ONNX loader.
**
** Reads model and tensor files (regular files up to 2 GiB, protobuf's
** limit), walks the wire format once to bound the nesting depth before
** protobuf-c's recursive unpacker sees it, unpacks, and resolves external
** data files strictly inside the model's folder.
**
** Tensor data buffers must be 64-byte aligned: they come from
** mlc_mem_aligned_alloc (the default allocator of base/alloc.h), and so do
** the blocks of the protobuf-c allocator below, which lets a raw_data block
** be adopted as tensor data instead of copied.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_CLOEXEC, pread */
#endif
#include "onnx/onnx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- memory --------------------------------------------------------------- */

void *mlc_onnx_aligned_alloc(size_t size) {
  return mlc_mem_aligned_alloc(size ? size : 1, MLC_ONNX_ALIGN);
}

void mlc_onnx_aligned_free(void *p) { mlc_mem_aligned_free(p); }

/* Small blocks are aligned for any type; larger ones (the only ones that can
** hold a tensor worth adopting) to MLC_ONNX_ALIGN.  mlc_mem_aligned_free
** releases both. */
static void *pb_alloc(void *self, size_t size) {
  (void)self;
  if (size >= MLC_ONNX_ALIGN) return mlc_onnx_aligned_alloc(size);
  return mlc_mem_aligned_alloc(size ? size : 1, 2 * sizeof(void *));
}

static void pb_free(void *self, void *p) {
  (void)self;
  mlc_mem_aligned_free(p);
}

ProtobufCAllocator mlc_onnx_pb_allocator = {pb_alloc, pb_free, NULL};

mlc_onnx_ctx *mlc_onnx_ctx_create(const char *base_dir) {
  mlc_arena *ar = mlc_arena_create(mlc_allocator_default());
  if (!ar) return NULL;
  mlc_onnx_ctx *c = MLC_ARENA_NEW(ar, mlc_onnx_ctx);
  if (!c) {
    mlc_arena_destroy(ar);
    return NULL;
  }
  c->arena = ar;
  if (base_dir) {
    c->base_dir = mlc_arena_strdup(ar, base_dir);
    if (!c->base_dir) {
      mlc_arena_destroy(ar);
      return NULL;
    }
  }
  return c;
}

void mlc_onnx_ctx_destroy(mlc_onnx_ctx *c) {
  if (!c) return;
  for (mlc_onnx_buf *b = c->bufs; b; b = b->next) mlc_onnx_aligned_free(b->p);
  mlc_arena_destroy(c->arena); /* c itself lives in the arena */
}

mlc_status mlc_onnx_ctx_own(mlc_onnx_ctx *c, void *p) {
  mlc_onnx_buf *b = MLC_ARENA_NEW(c->arena, mlc_onnx_buf);
  if (!b) {
    mlc_onnx_aligned_free(p);
    return mlc_oom();
  }
  b->p = p;
  b->next = c->bufs;
  c->bufs = b;
  return NULL;
}

char *mlc_onnx_dirname(mlc_onnx_ctx *c, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return mlc_arena_strdup(c->arena, ".");
  if (slash == path) return mlc_arena_strdup(c->arena, "/");
  return mlc_arena_strndup(c->arena, path, (size_t)(slash - path));
}

/* ---- files ---------------------------------------------------------------- */

/* Opens |path| read-only without blocking on FIFOs and checks it is a regular
** file.  |what| and |shown| name it in messages. */
static mlc_status open_regular(const char *path, const char *what, const char *shown, int *out_fd,
                               uint64_t *out_size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      return mlc_make_status(MLC_NOT_FOUND, "%s \"%s\" not found", what, shown);
    return mlc_make_status(MLC_IO_ERROR, "cannot open %s \"%s\": %s", what, shown, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return mlc_make_status(MLC_IO_ERROR, "cannot stat %s \"%s\": %s", what, shown, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s \"%s\" is not a regular file", what, shown);
  }
  *out_fd = fd;
  *out_size = (uint64_t)st.st_size;
  return NULL;
}

mlc_status mlc_onnx_pread_all(int fd, void *dst, size_t n, uint64_t offset, const char *what,
                              const char *location) {
  char *p = dst;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
    ssize_t r = pread(fd, p, chunk, (off_t)offset);
    if (r < 0) {
      if (errno == EINTR) continue;
      return mlc_make_status(MLC_IO_ERROR, "%s: reading \"%s\" failed: %s", what, location,
                             strerror(errno));
    }
    if (r == 0)
      return mlc_make_status(MLC_IO_ERROR, "%s: \"%s\" ended early (file changed while reading?)",
                             what, location);
    p += r;
    n -= (size_t)r;
    offset += (uint64_t)r;
  }
  return NULL;
}

mlc_status mlc_onnx_read_file(const char *path, const char *what, void **out_data,
                              size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  int fd;
  uint64_t size;
  MLC_RETURN_IF_ERROR(open_regular(path, what, path, &fd, &size));
  if (size > MLC_ONNX_MAX_FILE) {
    close(fd);
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s \"%s\" is %llu bytes; protobuf files are limited to 2 GiB "
                           "(store large weights as external data)",
                           what, path, (unsigned long long)size);
  }
  void *data = mlc_onnx_aligned_alloc((size_t)size);
  if (!data) {
    close(fd);
    return mlc_oom();
  }
  mlc_status s = mlc_onnx_pread_all(fd, data, (size_t)size, 0, what, path);
  close(fd);
  if (s) {
    mlc_onnx_aligned_free(data);
    return s;
  }
  *out_data = data;
  *out_size = (size_t)size;
  return NULL;
}

/* ---- wire format depth check -------------------------------------------- */

typedef enum { WIRE_OK, WIRE_DEEP, WIRE_BAD } wire_result;

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

/*
** message = { key value }; key = varint (field << 3 | wire type).
** Recurses only into fields that |d| declares as messages, so the recursion
** is bounded by MLC_ONNX_MAX_WIRE_DEPTH.  Anything malformed is WIRE_BAD;
** protobuf-c would refuse it as well.
*/
static wire_result scan_wire(const ProtobufCMessageDescriptor *d, const uint8_t *p,
                             const uint8_t *end, int depth) {
  if (depth > MLC_ONNX_MAX_WIRE_DEPTH) return WIRE_DEEP;
  while (p < end) {
    uint64_t key, v;
    if (read_varint(&p, end, &key)) return WIRE_BAD;
    switch (key & 7) {
      case 0: /* varint */
        if (read_varint(&p, end, &v)) return WIRE_BAD;
        break;
      case 1: /* fixed64 */
        if (end - p < 8) return WIRE_BAD;
        p += 8;
        break;
      case 5: /* fixed32 */
        if (end - p < 4) return WIRE_BAD;
        p += 4;
        break;
      case 2: { /* length-delimited */
        if (read_varint(&p, end, &v) || v > (uint64_t)(end - p)) return WIRE_BAD;
        uint64_t id = key >> 3;
        const ProtobufCFieldDescriptor *f =
            id <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)id) : NULL;
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
          wire_result r = scan_wire(f->descriptor, p, p + v, depth + 1);
          if (r != WIRE_OK) return r;
        }
        p += v;
        break;
      }
      default: /* groups (unsupported by protobuf-c) and invalid wire types */
        return WIRE_BAD;
    }
  }
  return WIRE_OK;
}

mlc_status mlc_onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *data, size_t size,
                           const char *what, const char *hint, ProtobufCMessage **out) {
  *out = NULL;
  if (size > MLC_ONNX_MAX_FILE)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "not a valid %s: %zu bytes; protobuf messages are limited to 2 GiB",
                           what, size);
  const uint8_t *p = data;
  wire_result r = size ? scan_wire(desc, p, p + size, 0) : WIRE_OK;
  if (r == WIRE_DEEP)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "not a valid %s: protobuf messages nested deeper than %d levels", what,
                           MLC_ONNX_MAX_WIRE_DEPTH);
  ProtobufCMessage *m =
      r == WIRE_OK ? protobuf_c_message_unpack(desc, &mlc_onnx_pb_allocator, size, p) : NULL;
  if (!m)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "not a valid %s: protobuf parse failed (file truncated or not %s?)",
                           what, hint);
  *out = m;
  return NULL;
}

/* ---- external data -------------------------------------------------------- */

static int has_dotdot(const char *s) {
  while (*s) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (n == 2 && s[0] == '.' && s[1] == '.') return 1;
    s += n;
    while (*s == '/') s++;
  }
  return 0;
}

static int inside(const char *dir, const char *p) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return p[0] == '/';
  return strncmp(dir, p, n) == 0 && (p[n] == '/' || p[n] == 0);
}

mlc_status mlc_onnx_open_external(mlc_onnx_ctx *c, const char *what, const char *location,
                                  int *out_fd, uint64_t *out_size) {
  *out_fd = -1;
  *out_size = 0;
  if (!c->base_dir)
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: data is in external file \"%s\" but the model was given "
                           "without a folder to resolve it in",
                           what, location);
  if (!*location)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "%s: external data location is empty", what);
  if (location[0] == '/')
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external data location \"%s\" is an absolute path (it must be "
                           "relative to the model's folder)",
                           what, location);
  if (has_dotdot(location))
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external data location \"%s\" has a \"..\" component (it must "
                           "stay inside the model's folder)",
                           what, location);
  if (!c->base_real) {
    char r[PATH_MAX];
    if (!realpath(c->base_dir, r))
      return mlc_make_status(MLC_IO_ERROR, "%s: cannot resolve the model's folder \"%s\": %s",
                             what, c->base_dir, strerror(errno));
    c->base_real = mlc_arena_strdup(c->arena, r);
    if (!c->base_real) return mlc_oom();
  }
  size_t n = strlen(c->base_dir) + 1 + strlen(location) + 1;
  char *full = mlc_mem_alloc(n);
  if (!full) return mlc_oom();
  snprintf(full, n, "%s/%s", c->base_dir, location);
  char real[PATH_MAX];
  int e = realpath(full, real) ? 0 : errno;
  mlc_mem_free(full);
  if (e) {
    if (e == ENOENT || e == ENOTDIR)
      return mlc_make_status(MLC_NOT_FOUND, "%s: external data file \"%s\" not found", what,
                             location);
    return mlc_make_status(MLC_IO_ERROR, "%s: cannot resolve external data file \"%s\": %s",
                           what, location, strerror(e));
  }
  if (!inside(c->base_real, real)) {
    return mlc_make_status(MLC_INVALID_ARGUMENT,
                           "%s: external data location \"%s\" resolves outside the model's "
                           "folder",
                           what, location);
  }
  mlc_status s = open_regular(real, "external data file", location, out_fd, out_size);
  return mlc_status_annotate(s, "%s", what);
}
