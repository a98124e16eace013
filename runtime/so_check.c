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

#include "runtime/rt_alloc.h"
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
  const mlc_rt_allocator *a; /* for the copy of the description (NULL: libc) */
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

/* At most this many PT_LOAD segments (a linker writes 4 or 5). */
#define MAX_LOADS 16

/* [addr, addr + len) lies in the memory of one of the |n| |load|s whose
** flags include |flags|. */
static int in_segment(const Elf64_Phdr *load, int n, uint64_t addr, uint64_t len, uint32_t flags) {
  for (int i = 0; i < n; i++)
    if ((load[i].p_flags & flags) == flags && addr >= load[i].p_vaddr && addr - load[i].p_vaddr <= load[i].p_memsz &&
        len <= load[i].p_memsz - (addr - load[i].p_vaddr))
      return 1;
  return 0;
}

static int in_memory(const Elf64_Phdr *load, int n, uint64_t addr, uint64_t len) {
  return in_segment(load, n, addr, len, 0);
}

/* Every relocation of the table at |addr| (|size| bytes of |entsize|-byte
** entries, read from the file) writes inside a writable segment. */
static int relocs_writable(const source *s, const Elf64_Phdr *load, int nload, uint64_t addr,
                           uint64_t size, uint64_t entsize) {
  /* the table's file offset, through the segment that maps it */
  uint64_t off = UINT64_MAX;
  for (int i = 0; i < nload && off == UINT64_MAX; i++)
    if (addr >= load[i].p_vaddr && addr - load[i].p_vaddr <= load[i].p_filesz &&
        size <= load[i].p_filesz - (addr - load[i].p_vaddr))
      off = load[i].p_offset + (addr - load[i].p_vaddr);
  if (off == UINT64_MAX) return 0;
  for (uint64_t k = 0; k + entsize <= size; k += entsize) {
    uint64_t where;
    if (src_read(s, off + k, &where, sizeof where) != 0) return 0;
    if (!in_segment(load, nload, where, 8, PF_W)) return 0;
  }
  return 1;
}

/* Segment |ph|'s first |mem| bytes of memory lie in one of the |n| |load|s,
** and its file bytes are the ones that load maps there. */
static int mapped_from_file(const Elf64_Phdr *load, int n, const Elf64_Phdr *ph, uint64_t mem) {
  for (int i = 0; i < n; i++) {
    const Elf64_Phdr *l = &load[i];
    if (ph->p_vaddr < l->p_vaddr) continue;
    uint64_t rel = ph->p_vaddr - l->p_vaddr;
    if (rel > l->p_memsz || mem > l->p_memsz - rel) continue;
    if (ph->p_filesz == 0) return 1;
    return ph->p_offset >= l->p_offset && ph->p_offset - l->p_offset == rel && rel <= l->p_filesz &&
           ph->p_filesz <= l->p_filesz - rel;
  }
  return 0;
}

/* The dynamic section (read from the file): a DT_NULL ends it, and every
** address in it, with the size that goes with it, is mapped memory. */
static mlc_rt_status check_dynamic(const source *s, const Elf64_Phdr *load, int nload,
                                   const Elf64_Phdr *dyn, char *err, size_t errlen) {
  static const struct { int64_t addr, size; } spans[] = {
      {DT_STRTAB, DT_STRSZ}, {DT_RELA, DT_RELASZ}, {DT_REL, DT_RELSZ}, {DT_JMPREL, DT_PLTRELSZ},
      {DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, {DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
      {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}, {DT_RELR, DT_RELRSZ}};
  static const int64_t addrs[] = {DT_HASH, DT_GNU_HASH, DT_SYMTAB, DT_INIT, DT_FINI, DT_PLTGOT,
                                  DT_VERSYM, DT_VERDEF, DT_VERNEED};
  uint64_t n = dyn->p_filesz / sizeof(Elf64_Dyn);
  uint64_t val[DT_NUM], have = 0;
  uint64_t ver[3] = {0, 0, 0}; /* DT_VERSYM, DT_VERDEF, DT_VERNEED */
  int ended = 0;
  for (uint64_t i = 0; i < n && !ended; i++) {
    Elf64_Dyn d;
    if (src_read(s, dyn->p_offset + i * sizeof d, &d, sizeof d) != 0)
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "truncated: dynamic entry %llu",
                  (unsigned long long)i);
    if (d.d_tag == DT_NULL) ended = 1;
    else if (d.d_tag > 0 && d.d_tag < DT_NUM) val[d.d_tag] = d.d_un.d_val, have |= 1ull << d.d_tag;
    else if (d.d_tag == DT_VERSYM) ver[0] = d.d_un.d_ptr ? d.d_un.d_ptr : 1;
    else if (d.d_tag == DT_VERDEF) ver[1] = d.d_un.d_ptr ? d.d_un.d_ptr : 1;
    else if (d.d_tag == DT_VERNEED) ver[2] = d.d_un.d_ptr ? d.d_un.d_ptr : 1;
    else if (d.d_tag == DT_GNU_HASH && !in_memory(load, nload, d.d_un.d_ptr, 16))
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "corrupt: the dynamic section's hash table is not mapped");
  }
  if (!ended) return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "corrupt: the dynamic section has no end");
  /* Code is executable, what the loader writes is writable. */
  static const int64_t code[] = {DT_INIT, DT_FINI}, data[] = {DT_INIT_ARRAY, DT_FINI_ARRAY, DT_PLTGOT};
  for (size_t i = 0; i < sizeof code / sizeof code[0]; i++)
    if ((have >> code[i]) & 1 && !in_segment(load, nload, val[code[i]], 1, PF_X | PF_R))
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT,
                  "corrupt: dynamic entry %lld is not in an executable segment", (long long)code[i]);
  for (size_t i = 0; i < sizeof data / sizeof data[0]; i++)
    if ((have >> data[i]) & 1 && !in_segment(load, nload, val[data[i]], 1, PF_W | PF_R))
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT,
                  "corrupt: dynamic entry %lld is not in a writable segment", (long long)data[i]);
  if (((have >> DT_RELA) & 1 && !relocs_writable(s, load, nload, val[DT_RELA], val[DT_RELASZ], 24)) ||
      ((have >> DT_REL) & 1 && !relocs_writable(s, load, nload, val[DT_REL], val[DT_RELSZ], 16)) ||
      ((have >> DT_JMPREL) & 1 &&
       !relocs_writable(s, load, nload, val[DT_JMPREL], val[DT_PLTRELSZ],
                        (have >> DT_PLTREL) & 1 && val[DT_PLTREL] == DT_REL ? 16 : 24)))
    return fail(err, errlen, MLC_RT_INVALID_ARGUMENT,
                "corrupt: a relocation writes outside the writable segments");
  for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
    int64_t a = spans[i].addr, z = spans[i].size;
    int ha = (have >> a) & 1, hz = (have >> z) & 1;
    if (ha != hz || (ha && !in_memory(load, nload, val[a], val[z])))
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT,
                  "corrupt: dynamic entry %lld (%llu bytes) is not mapped", (long long)a,
                  (unsigned long long)(hz ? val[z] : 0));
  }
  for (size_t i = 0; i < sizeof addrs / sizeof addrs[0]; i++) {
    int64_t a = addrs[i];
    uint64_t v;
    if (a >= 0 && a < DT_NUM) {
      if (!((have >> a) & 1)) continue;
      v = val[a];
    } else {
      v = a == DT_VERSYM ? ver[0] : a == DT_VERDEF ? ver[1] : a == DT_VERNEED ? ver[2] : 0;
      if (!v) continue;
    }
    if (!in_memory(load, nload, v, 1))
      return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "corrupt: dynamic entry %#llx is not mapped",
                  (unsigned long long)a);
  }
  return MLC_RT_OK;
}

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
  /* Every segment's bytes are in the file; the loadable ones ascend and
  ** do not overlap; every other segment lies in a loadable one, as does
  ** everything the dynamic section points at, so the loader of the system
  ** only ever reads memory it mapped from this file. */
  Elf64_Phdr load[MAX_LOADS], dyn;
  memset(&dyn, 0, sizeof dyn);
  int nload = 0, ndyn = 0;
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
    if (ph.p_vaddr > UINT64_MAX - ph.p_memsz)
      return fail(err, errlen, BAD, "corrupt: segment %u wraps around", i);
    if (ph.p_type == PT_DYNAMIC) dyn = ph, ndyn++;
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_filesz > ph.p_memsz || !(ph.p_flags & PF_R) ||
        (!(ph.p_flags & PF_W) && ph.p_filesz != ph.p_memsz))
      return fail(err, errlen, BAD, "corrupt: segment %u (flags %#x, %llu of %llu bytes from the file)",
                  i, ph.p_flags, (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_memsz);
    if (nload == MAX_LOADS)
      return fail(err, errlen, BAD, "corrupt: more than %d loadable segments", MAX_LOADS);
    if (nload && (ph.p_vaddr < load[nload - 1].p_vaddr + load[nload - 1].p_memsz ||
                  ph.p_offset < load[nload - 1].p_offset + load[nload - 1].p_filesz))
      return fail(err, errlen, BAD, "corrupt: loadable segment %u overlaps or precedes another", i);
    load[nload++] = ph;
  }
  if (!nload) return fail(err, errlen, BAD, "corrupt: no loadable segment");
  if (ndyn != 1) return fail(err, errlen, BAD, "corrupt: %d dynamic segments", ndyn);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (src_read(s, eh.e_phoff + (uint64_t)i * sizeof ph, &ph, sizeof ph) != 0)
      return fail(err, errlen, BAD, "truncated: program header %u unreadable", i);
    if (ph.p_type == PT_LOAD || ph.p_type == PT_GNU_STACK || (ph.p_memsz == 0 && ph.p_filesz == 0))
      continue;
    uint64_t mem = ph.p_type == PT_TLS ? ph.p_filesz : ph.p_memsz;
    if (ph.p_type == PT_GNU_RELRO && !in_segment(load, nload, ph.p_vaddr, ph.p_memsz, PF_W | PF_R))
      return fail(err, errlen, BAD, "corrupt: segment %u (read-only after relocation) is not writable", i);
    if (!mapped_from_file(load, nload, &ph, mem))
      return fail(err, errlen, BAD, "corrupt: segment %u (type %#x) is not inside a loadable one",
                  i, ph.p_type);
  }
  mlc_rt_status dst = check_dynamic(s, load, nload, &dyn, err, errlen);
  if (dst != MLC_RT_OK) return dst;
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
    /* The program headers map each allocated section's file bytes to its address. */
    if ((sh.sh_flags & SHF_ALLOC) && !(sh.sh_flags & SHF_TLS) && sh.sh_type != SHT_NOBITS &&
        sh.sh_size > 0) {
      Elf64_Phdr as;
      memset(&as, 0, sizeof as);
      as.p_offset = sh.sh_offset;
      as.p_vaddr = sh.sh_addr;
      as.p_filesz = as.p_memsz = sh.sh_size;
      if (sh.sh_addr > UINT64_MAX - sh.sh_size || !mapped_from_file(load, nload, &as, sh.sh_size))
        return fail(err, errlen, BAD,
                    "corrupt: section %u (%llu bytes at address %#llx, file offset %#llx) is not "
                    "where the segments map it",
                    i, (unsigned long long)sh.sh_size, (unsigned long long)sh.sh_addr,
                    (unsigned long long)sh.sh_offset);
    }
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
  uint8_t *blob = mlc_rt_alloc(s->a, (size_t)blob_sh.sh_size);
  if (!blob) return fail(err, errlen, MLC_RT_OUT_OF_MEMORY, "out of memory");
  if (src_read(s, blob_sh.sh_offset, blob, (size_t)blob_sh.sh_size) != 0) {
    mlc_rt_free(s->a, blob);
    return fail(err, errlen, BAD, "cannot read the %s section", want);
  }
  mlc_rt_model_desc *d = NULL;
  mlc_rt_status st = mlc_rt_desc_decode(s->a, blob, (size_t)blob_sh.sh_size, NULL, 0, NULL, &d, err, errlen);
  mlc_rt_free(s->a, blob);
  if (st != MLC_RT_OK) return st;
  if (out_desc) *out_desc = d;
  else mlc_rt_desc_free(d);
  return MLC_RT_OK;
}

mlc_rt_status mlc_rt_so_check_mem(const mlc_rt_allocator *a, const uint8_t *data, size_t n, mlc_rt_model_desc **out_desc,
                                  char *err, size_t errlen) {
  if (out_desc) *out_desc = NULL;
  if (err && errlen) err[0] = 0;
  if (!data && n) return fail(err, errlen, MLC_RT_INVALID_ARGUMENT, "no data");
  static const uint8_t none[1];
  source s = {data ? data : none, -1, n, a};
  return check(&s, out_desc, err, errlen);
}

mlc_rt_status mlc_rt_so_check_file(const mlc_rt_allocator *a, const char *path, mlc_rt_model_desc **out_desc, char *err,
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
  source s = {NULL, fd, (uint64_t)sb.st_size, a};
  mlc_rt_status st = check(&s, out_desc, err, errlen);
  close(fd);
  return st;
}
