/*
** trace.c: applying instructions, recording them, and the trace as text.
**
** The text form is one instruction per line, Python-like as in the seeds:
**
**   OUTS = sch.NAME(KEY=VALUE, ...)      or      sch.NAME(KEY=VALUE, ...)
**
** OUTS are handle names (b<N> blocks, l<N> loops, v<N> integers, numbered
** in order of definition); a VALUE is None, True, False, an integer, a
** float, a "string" (C escapes), a handle name or a [list] of those.
** Sampling instructions end with decision=VALUE.  Blank lines and text
** after '#' are ignored.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "lower/arith.h"
#include "lower/tir_visit.h"
#include "lower/schedule/sched_int.h"

static const char *const inst_names[] = {
#define X(e, name, fn) name,
#include "lower/schedule/prims.def"
#undef X
};

static const mlc_sch_apply_fn inst_fns[] = {
#define X(e, name, fn) fn,
#include "lower/schedule/prims.def"
#undef X
};

_Static_assert(sizeof inst_names / sizeof inst_names[0] == MLC_SCH_INST_COUNT, "prims.def names");

const char *mlc_sch_inst_name(mlc_sch_inst_kind k) {
  return (unsigned)k < MLC_SCH_INST_COUNT ? inst_names[k] : NULL;
}

int mlc_sch_inst_lookup(const char *name) {
  for (int i = 0; i < MLC_SCH_INST_COUNT; i++)
    if (strcmp(inst_names[i], name) == 0) return i;
  return -1;
}

int mlc_sch_trace_len(const mlc_sch *s) { return s->ntrace; }

/* ---- recording ---------------------------------------------------------------- */

static int copy_arg(mlc_arena *ar, const mlc_sch_arg *a, mlc_sch_arg *out) {
  *out = *a;
  if (a->key && !(out->key = mlc_arena_strdup(ar, a->key))) return -1;
  if (a->kind == MLC_SCH_ARG_STR && a->s && !(out->s = mlc_arena_strdup(ar, a->s))) return -1;
  if (a->kind == MLC_SCH_ARG_LIST) {
    mlc_sch_arg *items = a->n ? MLC_ARENA_ARRAY(ar, (size_t)a->n, mlc_sch_arg) : NULL;
    if (a->n && !items) return -1;
    for (int i = 0; i < a->n; i++)
      if (copy_arg(ar, &a->items[i], &items[i])) return -1;
    out->items = items;
  } else {
    out->items = NULL;
    if (a->kind != MLC_SCH_ARG_LIST) out->n = 0;
  }
  return 0;
}

static mlc_status record(mlc_sch *s, const mlc_sch_inst *in) {
  if (s->ntrace >= s->cap_trace) {
    int cap = s->cap_trace ? s->cap_trace * 2 : 32;
    sch_trace_inst *n = mlc_mem_realloc(s->trace, (size_t)cap * sizeof *n);
    if (!n) return mlc_oom();
    s->trace = n;
    s->cap_trace = cap;
  }
  sch_trace_inst t = {in->kind, in->nargs, NULL, in->nouts, NULL, MLC_SCH_NONE_ARG};
  if (in->nargs && !(t.args = MLC_ARENA_ARRAY(s->arena, (size_t)in->nargs, mlc_sch_arg))) return mlc_oom();
  for (int i = 0; i < in->nargs; i++)
    if (copy_arg(s->arena, &in->args[i], &t.args[i])) return mlc_oom();
  if (in->nouts && !(t.outs = mlc_arena_memdup(s->arena, in->outs, (size_t)in->nouts * sizeof *t.outs)))
    return mlc_oom();
  if (in->decision.kind != MLC_SCH_ARG_NONE && copy_arg(s->arena, &in->decision, &t.decision)) return mlc_oom();
  t.decision.key = NULL;
  s->trace[s->ntrace++] = t;
  return NULL;
}

static int region_pre(void *ctx, const mlc_tir_stmt *st) {
  if (st->kind == MLC_TIR_BLOCK && (st->block.nreads || st->block.nwrites)) {
    *(int *)ctx = 1;
    return MLC_TIR_VISIT_STOP;
  }
  return MLC_TIR_VISIT_CONTINUE;
}

/* Nonzero if a block of |body| carries access regions. */
static int has_regions(const mlc_tir_stmt *body) {
  int found = 0;
  mlc_tir_visitor v = {&found, NULL, NULL, region_pre, NULL, NULL, 0};
  mlc_tir_visit_stmt(&v, body);
  return found;
}

mlc_status mlc_sch_apply(mlc_sch *s, mlc_sch_inst_kind kind, int nargs, const mlc_sch_arg *args, mlc_sch_rv *outs,
                         int *nouts) {
  if ((unsigned)kind >= MLC_SCH_INST_COUNT)
    return mlc_make_status(MLC_INVALID_ARGUMENT, "schedule: unknown instruction %d", (int)kind);
  if (nouts) *nouts = 0;
  mlc_sch_arg *filtered = nargs ? mlc_mem_alloc((size_t)nargs * sizeof *filtered) : NULL;
  if (nargs && !filtered) return mlc_oom();
  mlc_sch_inst *in = mlc_mem_calloc(1, sizeof *in);
  if (!in) {
    mlc_mem_free(filtered);
    return mlc_oom();
  }
  in->kind = kind;
  for (int i = 0; i < nargs; i++) {
    if (args[i].key && strcmp(args[i].key, "decision") == 0)
      in->forced = &args[i];
    else
      filtered[in->nargs++] = args[i];
  }
  in->args = filtered;
  s->last_error = MLC_SCH_OK;
  s->cur_prim = inst_names[kind];
  int had_regions = has_regions(s->func->body);
  mlc_status st = inst_fns[kind](s, in);
  if (st) {
    if (s->last_error == MLC_SCH_OK && mlc_status_code(st) == MLC_INVALID_ARGUMENT)
      s->last_error = MLC_SCH_ERR_ARGUMENT;
    st = mlc_status_annotate(st, "%s", inst_names[kind]);
  } else if (had_regions && kind > MLC_SCH_INST_GET_CONSUMERS &&
             (st = mlc_tir_func_compute_regions(s->m, s->func))) {
    /* a function that carries access regions keeps them current */
  } else if ((st = mlc_tir_verify_func(s->func))) {
    mlc_status v = mlc_make_status(MLC_INTERNAL, "%s left an ill-formed function: %s", inst_names[kind],
                                   mlc_status_message(st));
    mlc_status_free(st);
    st = v;
  } else if (mlc_tir_module_oom(s->m)) {
    st = mlc_oom();
  } else {
    st = record(s, in);
  }
  if (!st) {
    if (outs) memcpy(outs, in->outs, (size_t)in->nouts * sizeof *outs);
    if (nouts) *nouts = in->nouts;
  }
  s->cur_prim = NULL;
  mlc_mem_free(filtered);
  mlc_mem_free(in);
  return st;
}

/* ---- printing ------------------------------------------------------------------ */

static void print_str(mlc_strbuf *b, const char *p) {
  mlc_sb_putc(b, '"');
  for (; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
      mlc_sb_printf(b, "\\%c", c);
    else if (c == '\n')
      mlc_sb_puts(b, "\\n");
    else if (c < 0x20 || c >= 0x7f)
      mlc_sb_printf(b, "\\x%02x", c);
    else
      mlc_sb_putc(b, (char)c);
  }
  mlc_sb_putc(b, '"');
}

static void print_rv(const mlc_sch *s, const int *names, mlc_sch_rv rv, mlc_strbuf *b) {
  if (rv <= 0 || rv >= s->nrvs || names[rv] < 0) {
    mlc_sb_puts(b, "?");
    return;
  }
  char p = s->rvs[rv].kind == MLC_SCH_RV_BLOCK ? 'b' : s->rvs[rv].kind == MLC_SCH_RV_LOOP ? 'l' : 'v';
  mlc_sb_printf(b, "%c%d", p, names[rv]);
}

static void print_value(const mlc_sch *s, const int *names, const mlc_sch_arg *a, mlc_strbuf *b) {
  switch (a->kind) {
    case MLC_SCH_ARG_NONE: mlc_sb_puts(b, "None"); break;
    case MLC_SCH_ARG_INT: mlc_sb_printf(b, "%lld", (long long)a->i); break;
    case MLC_SCH_ARG_FLOAT: {
      char t[64];
      snprintf(t, sizeof t, "%.17g", a->f);
      if (!strpbrk(t, ".eEn")) strcat(t, ".0");
      mlc_sb_puts(b, t);
      break;
    }
    case MLC_SCH_ARG_STR: print_str(b, a->s ? a->s : ""); break;
    case MLC_SCH_ARG_RV: print_rv(s, names, a->rv, b); break;
    case MLC_SCH_ARG_LIST:
      mlc_sb_putc(b, '[');
      for (int i = 0; i < a->n; i++) {
        if (i) mlc_sb_puts(b, ", ");
        print_value(s, names, &a->items[i], b);
      }
      mlc_sb_putc(b, ']');
      break;
  }
}

void mlc_sch_print_trace(const mlc_sch *s, mlc_strbuf *out) {
  int *names = mlc_mem_alloc((size_t)(s->nrvs + 1) * sizeof *names);
  if (!names) {
    mlc_sb_puts(out, "# out of memory\n");
    return;
  }
  for (int i = 0; i <= s->nrvs; i++) names[i] = -1;
  int next = 0;
  for (int t = 0; t < s->ntrace; t++) {
    const sch_trace_inst *in = &s->trace[t];
    for (int i = 0; i < in->nouts; i++) {
      if (i) mlc_sb_puts(out, ", ");
      if (in->outs[i] > 0 && in->outs[i] < s->nrvs) names[in->outs[i]] = next++;
      print_rv(s, names, in->outs[i], out);
    }
    if (in->nouts) mlc_sb_puts(out, " = ");
    mlc_sb_printf(out, "sch.%s(", inst_names[in->kind]);
    for (int i = 0; i < in->nargs; i++) {
      if (i) mlc_sb_puts(out, ", ");
      mlc_sb_printf(out, "%s=", in->args[i].key ? in->args[i].key : "?");
      print_value(s, names, &in->args[i], out);
    }
    if (in->decision.kind != MLC_SCH_ARG_NONE) {
      if (in->nargs) mlc_sb_puts(out, ", ");
      mlc_sb_puts(out, "decision=");
      print_value(s, names, &in->decision, out);
    }
    mlc_sb_puts(out, ")\n");
  }
  mlc_mem_free(names);
}

/* ---- parsing and replay ------------------------------------------------------------ */

typedef struct tparser {
  mlc_sch *s;
  const char *p, *end;
  const char *srcname;
  int line;
  mlc_arena *ar; /* parsed arguments of the current line */
  /* handle names of the text -> handles here */
  char **names;
  mlc_sch_rv *rvs;
  int nnames, cap;
} tparser;

static mlc_status perr(tparser *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static mlc_status perr(tparser *t, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  t->s->last_error = MLC_SCH_ERR_TRACE;
  return mlc_make_status(MLC_INVALID_ARGUMENT, "%s:%d: %s", t->srcname, t->line, msg);
}

static void skip_ws(tparser *t) {
  while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\r')) t->p++;
}

static int is_ident0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_ident(char c) { return is_ident0(c) || (c >= '0' && c <= '9'); }

/* An identifier at p into buf (truncated names are errors). */
static int ident(tparser *t, char *buf, size_t size) {
  skip_ws(t);
  size_t n = 0;
  if (t->p >= t->end || !is_ident0(*t->p)) return 0;
  while (t->p < t->end && is_ident(*t->p)) {
    if (n + 1 >= size) return 0;
    buf[n++] = *t->p++;
  }
  buf[n] = 0;
  return 1;
}

static int accept(tparser *t, char c) {
  skip_ws(t);
  if (t->p < t->end && *t->p == c) {
    t->p++;
    return 1;
  }
  return 0;
}

static mlc_sch_rv lookup_name(tparser *t, const char *name) {
  for (int i = t->nnames - 1; i >= 0; i--)
    if (strcmp(t->names[i], name) == 0) return t->rvs[i];
  return 0;
}

static mlc_status bind_name(tparser *t, const char *name, mlc_sch_rv rv) {
  if (t->nnames >= t->cap) {
    int cap = t->cap ? t->cap * 2 : 64;
    char **n = mlc_mem_realloc(t->names, (size_t)cap * sizeof *n);
    if (!n) return mlc_oom();
    t->names = n;
    mlc_sch_rv *r = mlc_mem_realloc(t->rvs, (size_t)cap * sizeof *r);
    if (!r) return mlc_oom();
    t->rvs = r;
    t->cap = cap;
  }
  char *c = mlc_arena_strdup(t->s->arena, name);
  if (!c) return mlc_oom();
  t->names[t->nnames] = c;
  t->rvs[t->nnames++] = rv;
  return NULL;
}

static mlc_status parse_value(tparser *t, int depth, mlc_sch_arg *out);

static mlc_status parse_string(tparser *t, mlc_sch_arg *out) {
  t->p++; /* the quote */
  mlc_strbuf b = MLC_STRBUF_INIT;
  while (t->p < t->end && *t->p != '"' && *t->p != '\n') {
    char c = *t->p++;
    if (c == '\\' && t->p < t->end) {
      char e = *t->p++;
      if (e == 'n') c = '\n';
      else if (e == 't') c = '\t';
      else if (e == 'x' && t->end - t->p >= 2) {
        char hex[3] = {t->p[0], t->p[1], 0};
        char *endp;
        long v = strtol(hex, &endp, 16);
        if (*endp || v == 0) {
          mlc_sb_fini(&b);
          return perr(t, "bad \\x escape in a string");
        }
        c = (char)v;
        t->p += 2;
      } else c = e;
    }
    mlc_sb_putc(&b, c);
  }
  if (t->p >= t->end || *t->p != '"') {
    mlc_sb_fini(&b);
    return perr(t, "unterminated string");
  }
  t->p++;
  out->kind = MLC_SCH_ARG_STR;
  out->s = b.oom ? NULL : mlc_arena_strdup(t->ar, mlc_sb_str(&b));
  mlc_sb_fini(&b);
  return out->s ? NULL : mlc_oom();
}

static mlc_status parse_value(tparser *t, int depth, mlc_sch_arg *out) {
  *out = MLC_SCH_NONE_ARG;
  skip_ws(t);
  if (t->p >= t->end) return perr(t, "expected a value");
  char c = *t->p;
  if (c == '"') return parse_string(t, out);
  if (c == '[') {
    if (depth > 0) return perr(t, "lists do not nest");
    t->p++;
    mlc_sch_arg items[MLC_SCH_MAX_OUTS];
    int n = 0;
    if (!accept(t, ']')) {
      do {
        if (n >= MLC_SCH_MAX_OUTS) return perr(t, "more than %d list items", MLC_SCH_MAX_OUTS);
        MLC_RETURN_IF_ERROR(parse_value(t, depth + 1, &items[n]));
        n++;
      } while (accept(t, ','));
      if (!accept(t, ']')) return perr(t, "expected ',' or ']' in a list");
    }
    out->kind = MLC_SCH_ARG_LIST;
    out->n = n;
    if (n) {
      mlc_sch_arg *v = mlc_arena_memdup(t->ar, items, (size_t)n * sizeof *v);
      if (!v) return mlc_oom();
      out->items = v;
    }
    return NULL;
  }
  if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
    const char *q = t->p;
    while (q < t->end && (is_ident(*q) || *q == '.' || *q == '-' || *q == '+')) q++;
    char num[64];
    if ((size_t)(q - t->p) >= sizeof num) return perr(t, "number too long");
    memcpy(num, t->p, (size_t)(q - t->p));
    num[q - t->p] = 0;
    char *endp;
    errno = 0;
    if (strpbrk(num, ".eE") || strstr(num, "inf") || strstr(num, "nan")) {
      out->kind = MLC_SCH_ARG_FLOAT;
      out->f = strtod(num, &endp);
    } else {
      out->kind = MLC_SCH_ARG_INT;
      out->i = strtoll(num, &endp, 10);
    }
    if (*endp || errno) return perr(t, "bad number \"%s\"", num);
    t->p = q;
    return NULL;
  }
  char name[64];
  if (!ident(t, name, sizeof name)) return perr(t, "expected a value");
  if (strcmp(name, "None") == 0) return NULL;
  if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0) {
    out->kind = MLC_SCH_ARG_INT;
    out->i = name[0] == 'T';
    return NULL;
  }
  mlc_sch_rv rv = lookup_name(t, name);
  if (!rv) return perr(t, "undefined handle %s", name);
  out->kind = MLC_SCH_ARG_RV;
  out->rv = rv;
  return NULL;
}

/* One instruction line (t->p at its first non-blank character). */
static mlc_status parse_line(tparser *t) {
  char outs[MLC_SCH_MAX_OUTS][64];
  int nouts = 0;
  char word[64];
  const char *start = t->p;
  if (!ident(t, word, sizeof word)) return perr(t, "expected an instruction");
  skip_ws(t);
  if (strcmp(word, "sch") != 0 || (t->p < t->end && *t->p != '.')) {
    /* OUTS = ... */
    t->p = start;
    do {
      if (nouts >= MLC_SCH_MAX_OUTS) return perr(t, "too many outputs");
      if (!ident(t, outs[nouts], sizeof outs[0])) return perr(t, "expected a handle name");
      nouts++;
    } while (accept(t, ','));
    if (!accept(t, '=')) return perr(t, "expected '='");
    if (!ident(t, word, sizeof word) || strcmp(word, "sch") != 0) return perr(t, "expected sch.PRIMITIVE(...)");
  }
  if (!accept(t, '.')) return perr(t, "expected sch.PRIMITIVE(...)");
  if (!ident(t, word, sizeof word)) return perr(t, "expected a primitive name");
  int kind = mlc_sch_inst_lookup(word);
  if (kind < 0) return perr(t, "unknown primitive %s", word);
  if (!accept(t, '(')) return perr(t, "expected '(' after %s", word);
  mlc_sch_arg args[32];
  int nargs = 0;
  if (!accept(t, ')')) {
    do {
      char key[64];
      if (nargs >= 32) return perr(t, "too many arguments");
      if (!ident(t, key, sizeof key)) return perr(t, "expected KEY=VALUE");
      if (!accept(t, '=')) return perr(t, "expected '=' after %s", key);
      MLC_RETURN_IF_ERROR(parse_value(t, 0, &args[nargs]));
      if (!(args[nargs].key = mlc_arena_strdup(t->ar, key))) return mlc_oom();
      nargs++;
    } while (accept(t, ','));
    if (!accept(t, ')')) return perr(t, "expected ',' or ')'");
  }
  skip_ws(t);
  if (t->p < t->end && *t->p == '#')
    while (t->p < t->end && *t->p != '\n') t->p++;
  if (t->p < t->end && *t->p != '\n') return perr(t, "unexpected text after the instruction");
  mlc_sch_rv got[MLC_SCH_MAX_OUTS];
  int ngot = 0;
  mlc_status st = mlc_sch_apply(t->s, (mlc_sch_inst_kind)kind, nargs, args, got, &ngot);
  if (st) return mlc_status_annotate(st, "%s:%d", t->srcname, t->line);
  if (ngot != nouts && nouts != 0)
    return perr(t, "%s gives %d handles, the trace names %d", word, ngot, nouts);
  for (int i = 0; i < nouts; i++) MLC_RETURN_IF_ERROR(bind_name(t, outs[i], got[i]));
  return NULL;
}

mlc_status mlc_sch_apply_trace(mlc_sch *s, const char *src, size_t len, const char *srcname) {
  tparser t = {s, src, src + len, srcname ? srcname : "trace", 1, NULL, NULL, NULL, 0, 0};
  mlc_status st = NULL;
  t.ar = mlc_arena_create(mlc_allocator_default());
  if (!t.ar) return mlc_oom();
  while (!st && t.p < t.end) {
    skip_ws(&t);
    if (t.p < t.end && *t.p == '#')
      while (t.p < t.end && *t.p != '\n') t.p++;
    if (t.p < t.end && *t.p != '\n') st = parse_line(&t);
    if (!st && t.p < t.end) {
      t.p++; /* the newline */
      t.line++;
    }
  }
  mlc_arena_destroy(t.ar);
  mlc_mem_free(t.names);
  mlc_mem_free(t.rvs);
  return st;
}
