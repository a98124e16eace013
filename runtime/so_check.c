/*
** so_check.c: a model.so checked from its bytes (rt_so.h).
**
** One reader over either a memory buffer or a file descriptor (pread):
** the ELF header, then each program header, each section header and the
** section names are read into local structs after a bounds check against
** the file's size, never through pointers into the data, so neither a
** short file nor a hostile offset can make a read go astray.  The model
** description section is then read whole and decoded (desc_decode.c).
*/
#include "config.h"
#include "runtime/rt_so.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rt_blob.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#error "no ELF machine number for this host"
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

typedef struct source {
  const uint8_t *mem; /* or */
  int fd;
  uint64_t size;
} source;

/* Reads |len| bytes at |off| into |buf|; 0, or -1 when outside the file. */
static int src_read(const source *s, uint64_t off, void *buf, size_t len) {
  if (off > s->size || len > s->size - off) return -1;
  if (s->mem) {
    memcpy(buf, s->mem + off, len);
    return 0;
  }
  size_t done = 0;
  while (done < len) {
    ssize_t r = pread(s->fd, (char *)buf + done, len - done, (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

static mlc_rt_status fail(char *err, size_t errlen, mlc_rt_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mlc_rt_status fail(char *err, size_t errlen, mlc_rt_status st, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* [off, off + len) lies inside [0, size). */
static int inside(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

static mlc_rt_status check(const source *s, mlc_rt_model_desc **out_desc, char *err, size_t errlen) {
  const mlc_rt_status BAD = MLC_RT_INVALID_ARGUMENT;
  unsigned long long size = (unsigned long long)s->size;
  Elf64_Ehdr eh;
  if (s->size < EI_NIDENT || src_read(s, 0, eh.e_ident, EI_NIDENT) != 0 ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return fail(err, errlen, BAD, "not an ELF file (%llu bytes, no ELF magic)", size);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return fail(err, errlen, BAD, "not a 64-bit ELF file (class %u)", eh.e_ident[EI_CLASS]);
  if (eh.e_ident[EI_DATA] != HOST_DATA)
    return fail(err, errlen, BAD, "ELF byte order %u is not this host's", eh.e_ident[EI_DATA]);
  if (eh.e_ident[EI_VERSION] != EV_CURRENT)
    return fail(err, errlen, BAD, "unknown ELF version %u", eh.e_ident[EI_VERSION]);
  if (src_read(s, 0, &eh, sizeof eh) != 0)
    return fail(err, errlen, BAD, "truncated: %llu bytes, shorter than an ELF header", size);
  if (eh.e_type != ET_DYN)
    return fail(err, errlen, BAD, "not a shared object (ELF type %u)", eh.e_type);
  if (eh.e_machine != HOST_MACHINE)
    return fail(err, errlen, BAD, "built for ELF machine %u, this host is machine %u",
                eh.e_machine, HOST_MACHINE);
  if (eh.e_version != EV_CURRENT || eh.e_ehsize != sizeof(Elf64_Ehdr) ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shentsize != sizeof(Elf64_Shdr))
    return fail(err, errlen, BAD, "corrupt ELF header (version %u, header sizes %u/%u/%u)",
                eh.e_version, eh.e_ehsize, eh.e_phentsize, eh.e_shentsize);
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM ||
      !inside(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), s->size))
    return fail(err, errlen, BAD,
                "truncated or corrupt: program headers (%u at offset %llu) outside the "
                "%llu-byte file",
                eh.e_phnum, (unsigned long long)eh.e_phoff, size);
  if (eh.e_shnum == 0 || eh.e_shoff == 0 ||
      !inside(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), s->size))
    return fail(err, errlen, BAD,
                "truncated or corrupt: section headers (%u at offset %llu) missing or outside "
                "the %llu-byte file",
                eh.e_shnum, (unsigned long long)eh.e_shoff, size);
  if (eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum)
    return fail(err, errlen, BAD, "corrupt ELF header: section name table index %u of %u",
                eh.e_shstrndx, eh.e_shnum);
  /* Every segment's bytes are in the file. */
  int nload = 0;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (src_read(s, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph) != 0)
      return fail(err, errlen, BAD, "truncated: program header %u unreadable", i);
    if (!inside(ph.p_offset, ph.p_filesz, s->size))
      return fail(err, errlen, BAD,
                  "truncated or corrupt: segment %u (type %u) needs bytes %llu..%llu, but the "
                  "file has %llu",
                  i, ph.p_type, (unsigned long long)ph.p_offset,
                  (unsigned long long)ph.p_offset + (unsigned long long)ph.p_filesz, size);
    if (ph.p_type == PT_LOAD) {
      nload++;
      if (ph.p_filesz > ph.p_memsz)
        return fail(err, errlen, BAD, "corrupt: segment %u has more file bytes than memory", i);
    }
  }
  if (!nload) return fail(err, errlen, BAD, "corrupt: no loadable segment");
  /* The section names, then the one description section. */
  Elf64_Shdr names;
  if (src_read(s, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof names, &names, sizeof names) != 0 ||
      names.sh_type != SHT_STRTAB || !inside(names.sh_offset, names.sh_size, s->size))
    return fail(err, errlen, BAD, "truncated or corrupt: the section name table");
  static const char want[] = MLC_RT_BLOB_SECTION;
  int found = -1;
  Elf64_Shdr blob_sh;
  memset(&blob_sh, 0, sizeof blob_sh);
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh;
    char nm[sizeof want];
    if (src_read(s, eh.e_shoff + (uint64_t)i * sizeof sh, &sh, sizeof sh) != 0)
      return fail(err, errlen, BAD, "truncated: section header %u unreadable", i);
    if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
        !inside(sh.sh_offset, sh.sh_size, s->size))
      return fail(err, errlen, BAD,
                  "truncated or corrupt: section %u needs bytes %llu..%llu, but the file has %llu",
                  i, (unsigned long long)sh.sh_offset,
                  (unsigned long long)sh.sh_offset + (unsigned long long)sh.sh_size, size);
    if (sh.sh_name >= names.sh_size)
      return fail(err, errlen, BAD, "corrupt: section %u name outside the name table", i);
    uint64_t room = names.sh_size - sh.sh_name;
    if (room < sizeof want) continue;
    if (src_read(s, names.sh_offset + sh.sh_name, nm, sizeof nm) != 0)
      return fail(err, errlen, BAD, "truncated: section %u name unreadable", i);
    if (memcmp(nm, want, sizeof want) != 0) continue;
    if (found >= 0)
      return fail(err, errlen, BAD, "two %s sections (%d and %u)", want, found, i);
    found = (int)i;
    blob_sh = sh;
  }
  if (found < 0)
    return fail(err, errlen, BAD,
                "no %s section: not a model compiled by mlc-onnx, or one of an older version", want);
  if (blob_sh.sh_type != SHT_PROGBITS || !(blob_sh.sh_flags & SHF_ALLOC) ||
      (blob_sh.sh_flags & SHF_WRITE) || blob_sh.sh_size == 0 || blob_sh.sh_size > UINT32_MAX)
    return fail(err, errlen, BAD, "corrupt %s section (type %u, flags %#llx, %llu bytes)", want,
                blob_sh.sh_type, (unsigned long long)blob_sh.sh_flags,
                (unsigned long long)blob_sh.sh_size);
  /* The bytes checked here are the bytes the runtime will see: the section
  ** lies inside a loaded segment. */
  int mapped = 0;
  for (unsigned i = 0; i < eh.e_phnum && !mapped; i++) {
    Elf64_Phdr ph;
    if (src_read(s, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph) != 0) break;
    mapped = ph.p_type == PT_LOAD && blob_sh.sh_offset >= ph.p_offset &&
             blob_sh.sh_offset - ph.p_offset <= ph.p_filesz &&
             blob_sh.sh_size <= ph.p_filesz - (blob_sh.sh_offset - ph.p_offset);
  }
  if (!mapped) return fail(err, errlen, BAD, "corrupt: the %s section is not in a loaded segment", want);
  uint8_t *blob = malloc((size_t)blob_sh.sh_size);
  if (!blob) return fail(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  if (src_read(s, blob_sh.sh_offset, blob, (size_t)blob_sh.sh_size) != 0) {
    free(blob);
    return fail(err, errlen, BAD, "cannot read the %s section", want);
  }
  mlc_rt_model_desc *d = NULL;
  mlc_rt_status st = mlc_rt_desc_decode(blob, (size_t)blob_sh.sh_size, NULL, 0, NULL, &d, err, errlen);
  free(blob);
  if (st != MLC_RT_OK) return st;
  if (out_desc) *out_desc = d;
  else mlc_rt_desc_free(d);
  return MLC_RT_OK;
}

mlc_rt_status mlc_rt_so_check_mem(const uint8_t *data, size_t n, mlc_rt_model_desc **out_desc,
                                  char *err, size_t errlen) {
  if (out_desc) *out_desc = NULL;
  if (err && errlen) err[0] = 0;
  if (!data && n) return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "no data");
  static const uint8_t none[1];
  source s = {data ? data : none, -1, n};
  return check(&s, out_desc, err, errlen);
}

mlc_rt_status mlc_rt_so_check_file(const char *path, mlc_rt_model_desc **out_desc, char *err,
                                   size_t errlen) {
  if (out_desc) *out_desc = NULL;
  if (err && errlen) err[0] = 0;
  if (!path) return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "NULL path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return fail(err, errlen, e == ENOENT ? MLC_RT_NOT_FOUND : MLC_RT_INVALID_ARGUMENT, "%s",
                strerror(e));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "not a regular file");
  }
  source s = {NULL, fd, (uint64_t)sb.st_size};
  mlc_rt_status st = check(&s, out_desc, err, errlen);
  close(fd);
  return st;
}
