/*
** tir_parse.c: reads the TVMScript-like text that tir_print.c writes back
** into TIR (format in tir.h), so that print -> parse -> print is identical.
**
** Two stages over the whole input: a lexer that makes Python-style tokens
** (INDENT and DEDENT from the indentation, no line ends inside brackets,
** a comment kept on the line end it precedes), then a recursive-descent
** parser over the token array, which can look ahead and step back (a te
** reduction prints its source before the axes the source uses).
**
** The parser inverts the printer rather than re-deciding anything: an
** expression node is built exactly as written, without the builders'
** folding (`x + 0` stays an addition, `/` on integers stays DIV), and the
** forms the printer derives are undone (a T.grid is a nest of serial loops
** from 0, `range(a, b)` has extent b - a, the statements after
** `Y = T.alloc_buffer(...)` are its body up to another buffer of that name,
** a scalar parameter's binding comes from its `# A.shape[0]` comment).
** Every node gets the lanes the builders would give it (T.Ramp,
** T.Broadcast and "float32x16" casts make vectors).  Loop and block
** iteration variables take the dtype of their extent (int64 unless it is
** another integer type).  Names are scoped as the printer scopes them; a
** suffixed name (i_1) is kept as the variable's name, which prints the same.
**
** Errors are values naming SRC:LINE:COL and what was expected; the first
** one stops the parse.  Nesting (brackets, indentation, expression and
** statement depth) is bounded by MAX_DEPTH, so no input recurses without
** limit.  Tokens, names and scratch arrays live in a scratch arena freed at
** the end; nodes live in the module's arena.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "lower/tir.h"

/* Most nesting of brackets, indentation levels, expression height and
** statement depth. */
#define MAX_DEPTH 256
/* Longest number token read (digits of a double's full expansion fit). */
#define MAX_NUMBER_CHARS 400

/* ---- tokens --------------------------------------------------------------- */

typedef enum tok_kind {
  T_NAME,
  T_INT,     /* decimal digits: ival (ovf when above UINT64_MAX) */
  T_FLOAT,   /* digits with '.' or an exponent */
  T_STR,     /* "..." with JSON escapes: str (decoded) */
  T_OP,      /* punctuation, s/len */
  T_NEWLINE, /* end of a logical line; comment: the line's "# ..." or NULL */
  T_INDENT,
  T_DEDENT,
  T_EOF
} tok_kind;

typedef struct tok {
  tok_kind kind;
  int line, col;
  const char *s; /* text in the source */
  size_t len;
  uint64_t ival;
  int ovf;
  const char *str;     /* T_STR: decoded, NUL-terminated (scratch) */
  const char *comment; /* T_NEWLINE: comment text after '#' (scratch) or NULL */
} tok;

typedef enum sym_kind {
  SYM_VAR,
  SYM_BUF,
  SYM_HANDLE,     /* a T.handle parameter not yet matched */
  SYM_USED_HANDLE /* one that T.match_buffer has turned into a buffer */
} sym_kind;

typedef struct sym {
  const char *name; /* NUL-terminated (scratch) */
  sym_kind kind;
  void *ptr; /* mlc_tir_var*, mlc_tir_buffer*, or the handle's param slot (int index + 1) */
} sym;

typedef struct parser {
  mlc_tir_module *m;
  mlc_arena *scratch;
  const char *src;
  size_t len;
  const char *srcname;
  mlc_status err; /* first error */
  tok *toks;
  size_t ntoks, cap_toks;
  size_t pos;
  sym *syms;
  int nsyms, cap_syms;
  int depth; /* current recursion depth of expressions and statements */
} parser;

/* ---- errors ----------------------------------------------------------------- */

static void describe(const tok *t, char *buf, size_t n) {
  switch (t->kind) {
    case T_NEWLINE: snprintf(buf, n, "end of line"); break;
    case T_INDENT: snprintf(buf, n, "an indented block"); break;
    case T_DEDENT: snprintf(buf, n, "the end of the indented block"); break;
    case T_EOF: snprintf(buf, n, "end of input"); break;
    case T_STR: snprintf(buf, n, "string \"%.32s\"", t->str ? t->str : ""); break;
    case T_NAME:
    case T_INT:
    case T_FLOAT:
    case T_OP: snprintf(buf, n, "'%.*s'", (int)(t->len < 32 ? t->len : 32), t->s); break;
  }
}

static void *fail_at(parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void *fail_at(parser *p, int line, int col, const char *fmt, ...) {
  if (p->err) return NULL;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = mlc_make_status(MLC_INVALID_ARGUMENT, "%s:%d:%d: %s", p->srcname, line, col, msg);
  return NULL;
}

#define fail(p, t, ...) fail_at((p), (t)->line, (t)->col, __VA_ARGS__)

/* "expected X, got Y" at |t|. */
static void *expected(parser *p, const tok *t, const char *what) {
  char d[64];
  describe(t, d, sizeof d);
  return fail(p, t, "expected %s, got %s", what, d);
}

static void *oom(parser *p) {
  if (!p->err) p->err = mlc_oom();
  return NULL;
}

/* |x| unless it is NULL (a builder or the arena ran out of memory). */
static void *chk(parser *p, void *x) {
  if (!x) return oom(p);
  return x;
}

/* Grows a scratch array *|arr| of |*cap| elements of |elem| bytes to hold
** |need|.  0 ok, -1 (error set) when out of memory. */
static int grow(parser *p, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap * 2 : 8;
  while (nc < need) nc *= 2;
  void *na = mlc_arena_array(p->scratch, (size_t)nc, elem);
  if (!na) {
    oom(p);
    return -1;
  }
  if (*cap) memcpy(na, *arr, (size_t)*cap * elem);
  *arr = na;
  *cap = nc;
  return 0;
}

/* ---- lexer ------------------------------------------------------------------- */

static tok *push_tok(parser *p, tok_kind k, int line, int col, const char *s, size_t len) {
  if (p->ntoks == p->cap_toks) {
    size_t nc = p->cap_toks ? p->cap_toks * 2 : 256;
    tok *nt = mlc_arena_array(p->scratch, nc, sizeof *nt);
    if (!nt) return oom(p);
    if (p->ntoks) memcpy(nt, p->toks, p->ntoks * sizeof *nt);
    p->toks = nt;
    p->cap_toks = nc;
  }
  tok *t = &p->toks[p->ntoks++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->line = line;
  t->col = col;
  t->s = s;
  t->len = len;
  return t;
}

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads the string starting at src[*i] == '"'; advances *i past it. */
static int lex_string(parser *p, size_t *i, int line, int col) {
  const char *s = p->src;
  size_t j = *i + 1, n = p->len;
  /* the decoded text is never longer than the source text */
  size_t end = j;
  while (end < n && s[end] != '"' && s[end] != '\n') end += (s[end] == '\\' && end + 1 < n) ? 2 : 1;
  if (end >= n || s[end] != '"') {
    fail_at(p, line, col, "unterminated string");
    return -1;
  }
  char *out = mlc_arena_alloc(p->scratch, end - j + 1);
  if (!out) {
    oom(p);
    return -1;
  }
  size_t k = 0;
  while (j < end) {
    unsigned char c = (unsigned char)s[j];
    int ccol = col + (int)(j - *i);
    if (c == '\\') {
      char e = s[j + 1];
      j += 2;
      switch (e) {
        case '"': out[k++] = '"'; break;
        case '\\': out[k++] = '\\'; break;
        case '/': out[k++] = '/'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'u': {
          unsigned v = 0;
          for (int d = 0; d < 4; d++) {
            int h = j < end ? hexval(s[j]) : -1;
            if (h < 0) {
              fail_at(p, line, ccol, "bad \\u escape in string (four hex digits expected)");
              return -1;
            }
            v = v * 16 + (unsigned)h;
            j++;
          }
          if (v == 0 || (v >= 0xd800 && v <= 0xdfff)) {
            fail_at(p, line, ccol, "\\u%04x is not allowed in a string", v);
            return -1;
          }
          /* UTF-8; the longest form (3 bytes) fits in the 6 source bytes */
          if (v < 0x80) {
            out[k++] = (char)v;
          } else if (v < 0x800) {
            out[k++] = (char)(0xc0 | (v >> 6));
            out[k++] = (char)(0x80 | (v & 0x3f));
          } else {
            out[k++] = (char)(0xe0 | (v >> 12));
            out[k++] = (char)(0x80 | ((v >> 6) & 0x3f));
            out[k++] = (char)(0x80 | (v & 0x3f));
          }
          break;
        }
        default:
          fail_at(p, line, ccol, "unknown escape '\\%c' in string", e >= 0x20 && e < 0x7f ? e : '?');
          return -1;
      }
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      fail_at(p, line, ccol, "control character 0x%02x in string (write it escaped)", c);
      return -1;
    }
    out[k++] = (char)c;
    j++;
  }
  out[k] = 0;
  tok *t = push_tok(p, T_STR, line, col, s + *i, end + 1 - *i);
  if (!t) return -1;
  t->str = out;
  *i = end + 1;
  return 0;
}

static int lex_number(parser *p, size_t *i, int line, int col) {
  const char *s = p->src;
  size_t j = *i, n = p->len;
  int isfloat = 0, ovf = 0;
  uint64_t v = 0;
  while (j < n && is_digit(s[j])) {
    uint64_t d = (uint64_t)(s[j] - '0');
    if (v > (UINT64_MAX - d) / 10) ovf = 1;
    v = v * 10 + d;
    j++;
  }
  if (j < n && s[j] == '.') {
    isfloat = 1;
    j++;
    while (j < n && is_digit(s[j])) j++;
  }
  if (j < n && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < n && (s[k] == '+' || s[k] == '-')) k++;
    if (k < n && is_digit(s[k])) {
      isfloat = 1;
      j = k;
      while (j < n && is_digit(s[j])) j++;
    }
  }
  if (j < n && (is_alpha(s[j]) || is_digit(s[j]) || s[j] == '.')) {
    fail_at(p, line, col, "malformed number '%.*s'", (int)(j + 1 - *i < 32 ? j + 1 - *i : 32), s + *i);
    return -1;
  }
  if (j - *i > MAX_NUMBER_CHARS) {
    fail_at(p, line, col, "number too long (%zu characters)", j - *i);
    return -1;
  }
  tok *t = push_tok(p, isfloat ? T_FLOAT : T_INT, line, col, s + *i, j - *i);
  if (!t) return -1;
  t->ival = v;
  t->ovf = ovf;
  *i = j;
  return 0;
}

static int lex(parser *p) {
  const char *s = p->src;
  size_t n = p->len, i = 0, line_start = 0;
  int line = 1;
  int ind[MAX_DEPTH + 1], nind = 1;
  ind[0] = 0;
  /* open brackets: the character and where it is */
  char br[MAX_DEPTH];
  int br_line[MAX_DEPTH], br_col[MAX_DEPTH], nbr = 0;
  int at_bol = 1;
  const char *comment = NULL;
#define COL ((int)(i - line_start) + 1)
  for (;;) {
    if (at_bol && nbr == 0) {
      size_t j = i;
      while (j < n && s[j] == ' ') j++;
      if (j < n && s[j] == '\t') return fail_at(p, line, (int)(j - line_start) + 1, "tab in indentation"), -1;
      if (j >= n) break;
      if (s[j] == '\n' || s[j] == '\r' || s[j] == '#') {
        /* blank or comment-only line */
        while (j < n && s[j] != '\n') j++;
        if (j < n) j++;
        i = j;
        line++;
        line_start = i;
        continue;
      }
      int width = (int)(j - i);
      i = j;
      if (width > ind[nind - 1]) {
        if (nind > MAX_DEPTH) return fail_at(p, line, COL, "indented too deeply (more than %d levels)", MAX_DEPTH), -1;
        ind[nind++] = width;
        if (!push_tok(p, T_INDENT, line, COL, s + i, 0)) return -1;
      } else {
        while (width < ind[nind - 1]) {
          nind--;
          if (!push_tok(p, T_DEDENT, line, COL, s + i, 0)) return -1;
        }
        if (width != ind[nind - 1])
          return fail_at(p, line, COL, "unindent does not match any outer indentation level"), -1;
      }
      at_bol = 0;
    }
    if (i >= n) break;
    char c = s[i];
    if (c == ' ' || c == '\r') {
      i++;
      continue;
    }
    if (c == '\n') {
      if (nbr == 0) {
        tok *t = push_tok(p, T_NEWLINE, line, COL, s + i, 1);
        if (!t) return -1;
        t->comment = comment;
        comment = NULL;
        at_bol = 1;
      }
      i++;
      line++;
      line_start = i;
      continue;
    }
    if (c == '#') {
      size_t j = i + 1;
      while (j < n && s[j] != '\n') j++;
      if (nbr == 0) {
        comment = mlc_arena_strndup(p->scratch, s + i + 1, j - i - 1);
        if (!comment) return oom(p), -1;
      }
      i = j;
      continue;
    }
    int col = COL;
    if (is_alpha(c)) {
      size_t j = i;
      while (j < n && (is_alpha(s[j]) || is_digit(s[j]))) j++;
      if (!push_tok(p, T_NAME, line, col, s + i, j - i)) return -1;
      i = j;
      continue;
    }
    if (is_digit(c)) {
      if (lex_number(p, &i, line, col)) return -1;
      continue;
    }
    if (c == '"') {
      if (lex_string(p, &i, line, col)) return -1;
      continue;
    }
    size_t oplen = 0;
    if (i + 1 < n) {
      char d = s[i + 1];
      if ((c == '/' && d == '/') || (d == '=' && (c == '=' || c == '!' || c == '<' || c == '>'))) oplen = 2;
    }
    if (!oplen && strchr("()[]{},:.=+-*/%<>@", c) && c != 0) oplen = 1;
    if (!oplen) {
      unsigned char u = (unsigned char)c;
      if (u >= 0x20 && u < 0x7f) return fail_at(p, line, col, "unexpected character '%c'", c), -1;
      return fail_at(p, line, col, "unexpected byte 0x%02x", u), -1;
    }
    if (oplen == 1 && (c == '(' || c == '[' || c == '{')) {
      if (nbr == MAX_DEPTH) return fail_at(p, line, col, "brackets nested too deeply (more than %d)", MAX_DEPTH), -1;
      br[nbr] = c;
      br_line[nbr] = line;
      br_col[nbr] = col;
      nbr++;
    } else if (oplen == 1 && (c == ')' || c == ']' || c == '}')) {
      char want = nbr ? (br[nbr - 1] == '(' ? ')' : br[nbr - 1] == '[' ? ']' : '}') : 0;
      if (!nbr) return fail_at(p, line, col, "unmatched '%c'", c), -1;
      if (c != want)
        return fail_at(p, line, col, "'%c' does not close '%c' at %d:%d", c, br[nbr - 1], br_line[nbr - 1],
                       br_col[nbr - 1]),
               -1;
      nbr--;
    }
    if (!push_tok(p, T_OP, line, col, s + i, oplen)) return -1;
    i += oplen;
  }
  if (nbr)
    return fail_at(p, br_line[nbr - 1], br_col[nbr - 1], "'%c' is never closed", br[nbr - 1]), -1;
  if (!at_bol) {
    tok *t = push_tok(p, T_NEWLINE, line, COL, s + i, 0);
    if (!t) return -1;
    t->comment = comment;
  }
  while (nind-- > 1)
    if (!push_tok(p, T_DEDENT, line, COL, s + i, 0)) return -1;
  return push_tok(p, T_EOF, line, COL, s + i, 0) ? 0 : -1;
#undef COL
}

/* ---- token helpers -------------------------------------------------------------- */

static const tok *cur(const parser *p) { return &p->toks[p->pos]; }
static const tok *at(const parser *p, size_t k) {
  size_t i = p->pos + k;
  return &p->toks[i < p->ntoks ? i : p->ntoks - 1];
}
static void advance(parser *p) {
  if (p->pos + 1 < p->ntoks) p->pos++;
}

static int text_is(const tok *t, const char *s) { return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0; }
static int is_op(const tok *t, const char *s) { return t->kind == T_OP && text_is(t, s); }
static int is_kw(const tok *t, const char *s) { return t->kind == T_NAME && text_is(t, s); }

static int accept_op(parser *p, const char *s) {
  if (!is_op(cur(p), s)) return 0;
  advance(p);
  return 1;
}

static int expect_op(parser *p, const char *s, const char *ctx) {
  if (accept_op(p, s)) return 1;
  char what[96];
  snprintf(what, sizeof what, "'%s' %s", s, ctx);
  expected(p, cur(p), what);
  return 0;
}

static int expect_kind(parser *p, tok_kind k, const char *what) {
  if (cur(p)->kind == k) {
    advance(p);
    return 1;
  }
  expected(p, cur(p), what);
  return 0;
}

/* The member token after "T." at offset |k|, or NULL. */
static const tok *t_member_at(const parser *p, size_t k) {
  if (is_kw(at(p, k), "T") && is_op(at(p, k + 1), ".") && at(p, k + 2)->kind == T_NAME) return at(p, k + 2);
  return NULL;
}

static int is_t(const parser *p, size_t k, const char *member) {
  const tok *t = t_member_at(p, k);
  return t && text_is(t, member);
}

/* Consumes "T.<member>" (known to be there). */
static void skip_t(parser *p) { p->pos += 3; }

static int expect_t(parser *p, const char *member) {
  if (is_t(p, 0, member)) {
    skip_t(p);
    return 1;
  }
  char what[64];
  snprintf(what, sizeof what, "T.%s", member);
  expected(p, cur(p), what);
  return 0;
}

static char *tok_name(parser *p, const tok *t) { return chk(p, mlc_arena_strndup(p->scratch, t->s, t->len)); }

/* ---- scope ------------------------------------------------------------------------- */

static int define(parser *p, const char *name, sym_kind k, void *ptr) {
  if (grow(p, (void **)&p->syms, &p->cap_syms, p->nsyms + 1, sizeof *p->syms)) return -1;
  p->syms[p->nsyms].name = name;
  p->syms[p->nsyms].kind = k;
  p->syms[p->nsyms].ptr = ptr;
  p->nsyms++;
  return 0;
}

static const sym *lookup(const parser *p, const tok *t) {
  for (int i = p->nsyms; i-- > 0;)
    if (text_is(t, p->syms[i].name)) return &p->syms[i];
  return NULL;
}

static mlc_tir_buffer *lookup_buffer(parser *p, const tok *t) {
  const sym *s = lookup(p, t);
  if (s && s->kind == SYM_BUF) return s->ptr;
  if (!s) return fail(p, t, "unknown buffer '%.*s'", (int)t->len, t->s);
  return fail(p, t, "'%.*s' is %s, not a buffer", (int)t->len, t->s,
              s->kind == SYM_VAR ? "a variable" : "a T.handle");
}

/* ---- expressions --------------------------------------------------------------------- */

static mlc_tir_expr *mk(parser *p, mlc_tir_expr_kind k, mlc_dtype t) {
  mlc_tir_expr *e = MLC_ARENA_NEW(p->m->arena, mlc_tir_expr);
  if (!e) return oom(p);
  e->kind = k;
  e->dtype = t;
  e->lanes = 1;
  return e;
}

static int imax(int a, int b) { return a > b ? a : b; }

static mlc_tir_expr *mk_int(parser *p, mlc_dtype t, int64_t v) {
  mlc_tir_expr *e = mk(p, MLC_TIR_INT_IMM, t);
  if (e) e->int_value = v;
  return e;
}

static int is_cmp(mlc_tir_binop op) {
  return op == MLC_TIR_EQ || op == MLC_TIR_NE || op == MLC_TIR_LT || op == MLC_TIR_LE || op == MLC_TIR_GT ||
         op == MLC_TIR_GE;
}

static mlc_tir_expr *mk_bin(parser *p, mlc_tir_binop op, mlc_tir_expr *a, mlc_tir_expr *b) {
  if (!a || !b) return NULL;
  mlc_tir_expr *e = mk(p, MLC_TIR_BINARY, is_cmp(op) ? MLC_DTYPE_BOOL : a->dtype);
  if (e) {
    e->lanes = imax(a->lanes, b->lanes);
    e->bin.op = op;
    e->bin.a = a;
    e->bin.b = b;
  }
  return e;
}

static int int_dtype(mlc_dtype t) { return mlc_dtype_is_int(t); }

/* The extent of [mn, end): undoes the printer's "min, min + extent" (or
** the constant it folds to: of one dtype in ranges, of the extent's in
** regions, |any_dtype|); otherwise end - mn. */
static mlc_tir_expr *range_extent(parser *p, mlc_tir_expr *mn, mlc_tir_expr *end, int any_dtype) {
  if (end->kind == MLC_TIR_BINARY && end->bin.op == MLC_TIR_ADD && mlc_tir_expr_equal(end->bin.a, mn)) return end->bin.b;
  if (mn->kind == MLC_TIR_INT_IMM && end->kind == MLC_TIR_INT_IMM && (any_dtype || mn->dtype == end->dtype))
    return mk_int(p, end->dtype, (int64_t)((uint64_t)end->int_value - (uint64_t)mn->int_value));
  return mk_bin(p, MLC_TIR_SUB, end, mn);
}

static mlc_tir_expr *expr(parser *p, int *h);

/* Tracks expression height; fails past MAX_DEPTH. */
static int height_ok(parser *p, const tok *t, int h) {
  if (h <= MAX_DEPTH) return 1;
  fail(p, t, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
  return 0;
}

/* Parses "(" a1, a2, ... ")" (the '(' is current) into |args| (scratch),
** at most |max| arguments; *|n| gets the count. */
static int call_args(parser *p, const char *fn, mlc_tir_expr ***args, int *n, int *h) {
  int cap = 0;
  *n = 0;
  *args = NULL;
  if (!expect_op(p, "(", fn)) return -1;
  if (accept_op(p, ")")) return 0;
  for (;;) {
    int ha = 0;
    mlc_tir_expr *a = expr(p, &ha);
    if (!a) return -1;
    if (ha > *h) *h = ha;
    if (grow(p, (void **)args, &cap, *n + 1, sizeof **args)) return -1;
    (*args)[(*n)++] = a;
    if (accept_op(p, ")")) return 0;
    if (!expect_op(p, ",", "or ')' between arguments")) return -1;
  }
}

/* Signed integer literal: ['-'] INT; *|neg| and *|mag|. */
static int int_literal(parser *p, int *neg, uint64_t *mag, const char *what) {
  *neg = accept_op(p, "-");
  const tok *t = cur(p);
  if (t->kind != T_INT) {
    expected(p, t, what);
    return -1;
  }
  if (t->ovf) {
    fail(p, t, "integer %.*s is too large", (int)(t->len < 40 ? t->len : 40), t->s);
    return -1;
  }
  *mag = t->ival;
  advance(p);
  return 0;
}

/* Whether ±|mag| fits integer dtype |t|; *|v| gets the stored value. */
static int int_fits(mlc_dtype t, int neg, uint64_t mag, int64_t *v) {
  int bits = (int)mlc_dtype_size(t) * 8;
  if (mlc_dtype_is_signed(t)) {
    uint64_t lim = (uint64_t)1 << (bits - 1); /* |min| */
    if (neg ? mag > lim : mag >= lim) return 0;
    *v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return 1;
  }
  if (neg && mag) return 0;
  if (bits < 64 && mag >> bits) return 0;
  *v = (int64_t)mag;
  return 1;
}

/* T.<dtype>(literal): the '(' is current. */
static mlc_tir_expr *typed_const(parser *p, const tok *name, mlc_dtype t) {
  if (!expect_op(p, "(", "after a dtype")) return NULL;
  const tok *lit = cur(p);
  mlc_tir_expr *e = NULL;
  if (int_dtype(t)) {
    int neg;
    uint64_t mag;
    int64_t v;
    if (int_literal(p, &neg, &mag, "an integer")) return NULL;
    if (!int_fits(t, neg, mag, &v))
      return fail(p, lit, "integer %s%llu out of range for %s", neg ? "-" : "", (unsigned long long)mag,
                  mlc_dtype_name(t));
    e = mk_int(p, t, v);
  } else if (mlc_dtype_is_float(t)) {
    double v;
    if (lit->kind == T_STR) {
      if (strcmp(lit->str, "nan") == 0) v = NAN;
      else if (strcmp(lit->str, "inf") == 0) v = INFINITY;
      else if (strcmp(lit->str, "-inf") == 0) v = -INFINITY;
      else return fail(p, lit, "expected \"nan\", \"inf\" or \"-inf\", got \"%.32s\"", lit->str);
      advance(p);
    } else {
      int neg = accept_op(p, "-");
      lit = cur(p);
      if (lit->kind != T_INT && lit->kind != T_FLOAT) return expected(p, lit, "a number");
      char buf[MAX_NUMBER_CHARS + 2];
      snprintf(buf, sizeof buf, "%s%.*s", neg ? "-" : "", (int)lit->len, lit->s);
      v = strtod(buf, NULL);
      if (isinf(v)) return fail(p, lit, "number %.32s is out of range of float64", buf);
      advance(p);
    }
    e = mk(p, MLC_TIR_FLOAT_IMM, t);
    if (e) e->float_value = v;
  } else {
    return fail(p, name, "T.%.*s is not a constant type", (int)name->len, name->s);
  }
  if (!e || !expect_op(p, ")", "after the constant")) return NULL;
  return e;
}

/* A dtype string: "float32", or with |lanes| non-NULL also a vector
** "float32x16" (*|lanes| gets 16; 1 for a scalar). */
static mlc_dtype dtype_lanes_of_str(parser *p, const tok *t, int *lanes) {
  if (t->kind != T_STR) {
    expected(p, t, "a dtype string");
    return MLC_DTYPE_INVALID;
  }
  char name[24];
  size_t n = strlen(t->str);
  int nl = 1;
  const char *x = strrchr(t->str, 'x');
  if (lanes && x && x[1] && strspn(x + 1, "0123456789") == strlen(x + 1)) {
    n = (size_t)(x - t->str);
    nl = 0;
    for (const char *q = x + 1; *q && nl <= MLC_TIR_MAX_LANES; q++) nl = nl * 10 + (*q - '0');
    if (nl < 2 || nl > MLC_TIR_MAX_LANES) {
      fail(p, t, "vector dtype \"%.32s\": lanes must be 2 to %d", t->str, MLC_TIR_MAX_LANES);
      return MLC_DTYPE_INVALID;
    }
  }
  mlc_dtype d = MLC_DTYPE_INVALID;
  if (n < sizeof name) {
    memcpy(name, t->str, n);
    name[n] = 0;
    d = mlc_dtype_from_name(name);
  }
  if (d == MLC_DTYPE_INVALID || d == MLC_DTYPE_STRING) {
    fail(p, t, "unknown dtype \"%.32s\"", t->str);
    return MLC_DTYPE_INVALID;
  }
  if (lanes) *lanes = nl;
  advance(p);
  return d;
}

static mlc_dtype dtype_of_str(parser *p, const tok *t) { return dtype_lanes_of_str(p, t, NULL); }

/* Scans from the current token (just after a call's '(') for a top-level
** ", axis=" before the call's ')'; its index, or 0 when none. */
static size_t find_axis(const parser *p) {
  int depth = 0;
  for (size_t i = p->pos; i < p->ntoks; i++) {
    const tok *t = &p->toks[i];
    if (t->kind == T_EOF) return 0;
    if (t->kind != T_OP) continue;
    if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{")) depth++;
    else if (is_op(t, ")") || is_op(t, "]") || is_op(t, "}")) {
      if (depth-- == 0) return 0;
    } else if (depth == 0 && is_op(t, ",") && i + 2 < p->ntoks && is_kw(&p->toks[i + 1], "axis") &&
               is_op(&p->toks[i + 2], "=")) {
      return i;
    }
  }
  return 0;
}

/* T.sum / prod / min / max (source, axis=[k(ext), k2(min, ext)]): the
** current token is just after '('; |comma| is the ", axis=" found. */
static mlc_tir_expr *reduction(parser *p, mlc_tir_reduce_op op, size_t comma, int *h) {
  size_t src_pos = p->pos;
  p->pos = comma + 3;
  if (!expect_op(p, "[", "after axis=")) return NULL;
  mlc_tir_iter_var *axes = NULL;
  int n = 0, cap = 0;
  do {
    const tok *name = cur(p);
    if (name->kind != T_NAME) return expected(p, name, "a reduction axis name");
    advance(p);
    int ha = 0, hb = 0;
    if (!expect_op(p, "(", "after the axis name")) return NULL;
    mlc_tir_expr *a = expr(p, &ha), *b = NULL;
    if (!a) return NULL;
    if (accept_op(p, ",") && !(b = expr(p, &hb))) return NULL;
    if (!expect_op(p, ")", "after the axis range")) return NULL;
    if (grow(p, (void **)&axes, &cap, n + 1, sizeof *axes)) return NULL;
    mlc_tir_expr *ext = b ? b : a;
    mlc_tir_expr *mn = b ? a : mk_int(p, int_dtype(ext->dtype) ? ext->dtype : MLC_DTYPE_I64, 0);
    char *nm = tok_name(p, name);
    mlc_tir_var *v = nm ? chk(p, mlc_tir_var_new(p->m, nm, int_dtype(ext->dtype) ? ext->dtype : MLC_DTYPE_I64)) : NULL;
    if (!mn || !v) return NULL;
    axes[n].var = v;
    axes[n].kind = MLC_TIR_ITER_REDUCE;
    axes[n].min = mn;
    axes[n].extent = ext;
    axes[n].binding = NULL;
    n++;
    if (ha > *h) *h = ha;
    if (hb > *h) *h = hb;
  } while (accept_op(p, ","));
  if (!expect_op(p, "]", "after the reduction axes") || !expect_op(p, ")", "after axis=[...]")) return NULL;
  size_t end = p->pos;
  int mark = p->nsyms;
  for (int i = 0; i < n; i++)
    if (define(p, axes[i].var->name, SYM_VAR, axes[i].var)) return NULL;
  p->pos = src_pos;
  int hs = 0;
  mlc_tir_expr *src = expr(p, &hs);
  p->nsyms = mark;
  if (!src) return NULL;
  if (p->pos != comma) return expected(p, cur(p), "', axis=' after the reduction source");
  p->pos = end;
  if (hs > *h) *h = hs;
  mlc_tir_expr *e = mk(p, MLC_TIR_REDUCE, src->dtype);
  mlc_tir_iter_var *ax = e ? chk(p, MLC_ARENA_ARRAY(p->m->arena, (size_t)n, mlc_tir_iter_var)) : NULL;
  if (!ax) return NULL;
  memcpy(ax, axes, (size_t)n * sizeof *ax);
  e->reduce.op = op;
  e->reduce.source = src;
  e->reduce.naxes = n;
  e->reduce.axes = ax;
  return e;
}

static const struct {
  const char *name;
  mlc_tir_binop op;
} call_binops[] = {
    {"truncdiv", MLC_TIR_TRUNCDIV}, {"truncmod", MLC_TIR_TRUNCMOD}, {"min", MLC_TIR_MIN},
    {"max", MLC_TIR_MAX},           {"bitwise_and", MLC_TIR_AND},   {"bitwise_or", MLC_TIR_OR},
};

/* T.<name>(...) in an expression; the current token is "T". */
static mlc_tir_expr *t_call(parser *p, int *h) {
  const tok *name = at(p, 2);
  char fn[48];
  snprintf(fn, sizeof fn, "after T.%.*s", (int)(name->len < 32 ? name->len : 32), name->s);
  skip_t(p);
  mlc_dtype dt = MLC_DTYPE_INVALID;
  if (name->len < 16) {
    char nm[16];
    memcpy(nm, name->s, name->len);
    nm[name->len] = 0;
    dt = mlc_dtype_from_name(nm);
  }
  if (dt != MLC_DTYPE_INVALID) {
    *h = 1;
    return typed_const(p, name, dt);
  }
  if (text_is(name, "Cast")) {
    if (!expect_op(p, "(", fn)) return NULL;
    int lanes = 1;
    mlc_dtype t = dtype_lanes_of_str(p, cur(p), &lanes);
    if (t == MLC_DTYPE_INVALID || !expect_op(p, ",", "after the dtype of T.Cast")) return NULL;
    int ha = 0;
    mlc_tir_expr *a = expr(p, &ha);
    if (!a || !expect_op(p, ")", "after the operand of T.Cast")) return NULL;
    *h = ha + 1;
    mlc_tir_expr *e = mk(p, MLC_TIR_CAST, t);
    if (e) {
      e->lanes = lanes;
      e->un.a = a;
    }
    return e;
  }
  int ramp = text_is(name, "Ramp");
  if (ramp || text_is(name, "Broadcast")) {
    /* T.Ramp(base, stride, lanes) / T.Broadcast(value, lanes) */
    int ha = 0, hb = 0;
    mlc_tir_expr *a, *b = NULL;
    if (!expect_op(p, "(", fn) || !(a = expr(p, &ha))) return NULL;
    if (ramp && (!expect_op(p, ",", "after the ramp's base") || !(b = expr(p, &hb)))) return NULL;
    if (!expect_op(p, ",", ramp ? "after the ramp's stride" : "after the broadcast value")) return NULL;
    const tok *lt = cur(p);
    int neg;
    uint64_t mag;
    if (int_literal(p, &neg, &mag, "the number of lanes")) return NULL;
    if (neg || mag < 2 || mag > MLC_TIR_MAX_LANES)
      return fail(p, lt, "%s lanes must be 2 to %d", ramp ? "T.Ramp" : "T.Broadcast", MLC_TIR_MAX_LANES);
    if (!expect_op(p, ")", "after the lanes")) return NULL;
    *h = imax(ha, hb) + 1;
    mlc_tir_expr *e = mk(p, ramp ? MLC_TIR_RAMP : MLC_TIR_BROADCAST, a->dtype);
    if (!e) return NULL;
    e->lanes = (int)mag;
    if (ramp) {
      e->ramp.base = a;
      e->ramp.stride = b;
    } else {
      e->un.a = a;
    }
    return e;
  }
  static const struct {
    const char *name;
    mlc_tir_reduce_op op;
  } reds[] = {{"sum", MLC_TIR_REDUCE_SUM}, {"prod", MLC_TIR_REDUCE_PROD}, {"min", MLC_TIR_REDUCE_MIN},
              {"max", MLC_TIR_REDUCE_MAX}};
  for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++) {
    if (!text_is(name, reds[i].name)) continue;
    if (!expect_op(p, "(", fn)) return NULL;
    size_t comma = find_axis(p);
    if (comma) {
      int hr = 0;
      mlc_tir_expr *e = reduction(p, reds[i].op, comma, &hr);
      *h = hr + 1;
      return e;
    }
    p->pos--;
    if (i < 2) return fail(p, name, "T.%s takes (source, axis=[...])", reds[i].name);
  }
  mlc_tir_expr **args;
  int n, ha = 0;
  const tok *open = cur(p);
  if (call_args(p, fn, &args, &n, &ha)) return NULL;
  *h = ha + 1;
  for (size_t i = 0; i < sizeof call_binops / sizeof call_binops[0]; i++) {
    if (!text_is(name, call_binops[i].name)) continue;
    if (n != 2) return fail(p, open, "T.%s takes 2 arguments, got %d", call_binops[i].name, n);
    return mk_bin(p, call_binops[i].op, args[0], args[1]);
  }
  if (text_is(name, "bitwise_not")) {
    if (n != 1) return fail(p, open, "T.bitwise_not takes 1 argument, got %d", n);
    mlc_tir_expr *e = mk(p, MLC_TIR_NOT, args[0]->dtype);
    if (e) {
      e->lanes = args[0]->lanes;
      e->un.a = args[0];
    }
    return e;
  }
  if (text_is(name, "if_then_else")) {
    if (n != 3) return fail(p, open, "T.if_then_else takes 3 arguments, got %d", n);
    mlc_tir_expr *e = mk(p, MLC_TIR_SELECT, args[1]->dtype);
    if (e) {
      e->lanes = imax(args[0]->lanes, imax(args[1]->lanes, args[2]->lanes));
      e->select.c = args[0];
      e->select.t = args[1];
      e->select.f = args[2];
    }
    return e;
  }
  for (int op = 0; op < MLC_TIR_INTRIN_COUNT; op++) {
    if (!text_is(name, mlc_tir_intrin_name((mlc_tir_intrin)op))) continue;
    int want = mlc_tir_intrin_nargs((mlc_tir_intrin)op);
    if (n != want)
      return fail(p, open, "T.%s takes %d argument%s, got %d", mlc_tir_intrin_name((mlc_tir_intrin)op), want,
                  want == 1 ? "" : "s", n);
    int boolres = op == MLC_TIR_INTRIN_ISNAN || op == MLC_TIR_INTRIN_ISINF;
    int pf = op == MLC_TIR_INTRIN_PREFETCH; /* int32 0, whatever it fetches */
    mlc_tir_expr *e = mk(p, MLC_TIR_CALL, boolres ? MLC_DTYPE_BOOL : n && !pf ? args[0]->dtype : MLC_DTYPE_I32);
    mlc_tir_expr **a = e && n ? chk(p, MLC_ARENA_ARRAY(p->m->arena, (size_t)n, mlc_tir_expr *)) : NULL;
    if (!e || (n && !a)) return NULL;
    if (n) memcpy(a, args, (size_t)n * sizeof *a);
    for (int i = 0; i < n && !pf; i++) e->lanes = imax(e->lanes, args[i]->lanes);
    e->call.op = (mlc_tir_intrin)op;
    e->call.n = n;
    e->call.args = a;
    return e;
  }
  return fail(p, name, "unknown function T.%.*s", (int)(name->len < 32 ? name->len : 32), name->s);
}

/* Index list inside "[...]" (the '[' consumed): "()" for none. */
static int indices(parser *p, mlc_tir_expr ***idx, int *n, int *h) {
  int cap = 0;
  *n = 0;
  *idx = NULL;
  if (is_op(cur(p), "(") && is_op(at(p, 1), ")") && is_op(at(p, 2), "]")) {
    p->pos += 3;
    return 0;
  }
  do {
    int hi = 0;
    mlc_tir_expr *e = expr(p, &hi);
    if (!e) return -1;
    if (hi > *h) *h = hi;
    if (grow(p, (void **)idx, &cap, *n + 1, sizeof **idx)) return -1;
    (*idx)[(*n)++] = e;
  } while (accept_op(p, ","));
  return expect_op(p, "]", "after the indices") ? 0 : -1;
}

static mlc_tir_expr **arena_exprs(parser *p, mlc_tir_expr **v, int n) {
  if (n == 0) return NULL;
  mlc_tir_expr **a = chk(p, MLC_ARENA_ARRAY(p->m->arena, (size_t)n, mlc_tir_expr *));
  if (a) memcpy(a, v, (size_t)n * sizeof *a);
  return a;
}

static mlc_tir_expr *atom(parser *p, int *h) {
  const tok *t = cur(p);
  *h = 1;
  switch (t->kind) {
    case T_INT:
      if (t->ovf || t->ival > (uint64_t)INT64_MAX)
        return fail(p, t, "integer %.*s out of range for int64", (int)(t->len < 40 ? t->len : 40), t->s);
      advance(p);
      return mk_int(p, MLC_DTYPE_I64, (int64_t)t->ival);
    case T_FLOAT: return fail(p, t, "a float constant is written T.float32(%.*s)", (int)(t->len < 32 ? t->len : 32), t->s);
    case T_NAME: {
      if (is_kw(t, "True") || is_kw(t, "False")) {
        advance(p);
        return mk_int(p, MLC_DTYPE_BOOL, is_kw(t, "True"));
      }
      if (t_member_at(p, 0)) return t_call(p, h);
      const sym *s = lookup(p, t);
      if (!s) return fail(p, t, "unknown name '%.*s'", (int)(t->len < 64 ? t->len : 64), t->s);
      if (s->kind == SYM_VAR) {
        advance(p);
        mlc_tir_var *v = s->ptr;
        mlc_tir_expr *e = mk(p, MLC_TIR_VAR_REF, v->dtype);
        if (e) e->var = v;
        return e;
      }
      mlc_tir_buffer *b = lookup_buffer(p, t);
      if (!b) return NULL;
      advance(p);
      if (!expect_op(p, "[", "after a buffer name")) return NULL;
      mlc_tir_expr **idx;
      int n, hi = 0;
      if (indices(p, &idx, &n, &hi)) return NULL;
      *h = hi + 1;
      mlc_tir_expr *e = mk(p, MLC_TIR_LOAD, b->dtype);
      if (!e) return NULL;
      for (int i = 0; i < n; i++) e->lanes = imax(e->lanes, idx[i]->lanes);
      e->load.buffer = b;
      e->load.n = n;
      e->load.indices = arena_exprs(p, idx, n);
      return (n && !e->load.indices) ? NULL : e;
    }
    case T_OP:
      if (is_op(t, "(")) {
        advance(p);
        mlc_tir_expr *e = expr(p, h);
        if (!e || !expect_op(p, ")", "to close '('")) return NULL;
        return e;
      }
      break;
    case T_STR:
    case T_NEWLINE:
    case T_INDENT:
    case T_DEDENT:
    case T_EOF: break;
  }
  return expected(p, t, "an expression");
}

/* unary: '-' INT (an int64 constant) | atom */
static mlc_tir_expr *unary(parser *p, int *h) {
  if (is_op(cur(p), "-")) {
    const tok *minus = cur(p);
    advance(p);
    const tok *t = cur(p);
    if (t->kind != T_INT) return fail(p, minus, "unary '-' applies only to an integer literal");
    if (t->ovf || t->ival > (uint64_t)INT64_MAX + 1)
      return fail(p, t, "integer -%.*s out of range for int64", (int)(t->len < 40 ? t->len : 40), t->s);
    advance(p);
    *h = 1;
    return mk_int(p, MLC_DTYPE_I64, (int64_t)(0 - t->ival));
  }
  return atom(p, h);
}

static int binop_at(const tok *t, int level, mlc_tir_binop *op) {
  if (t->kind != T_OP) return 0;
  static const struct {
    const char *s;
    int level;
    mlc_tir_binop op;
  } ops[] = {{"+", 0, MLC_TIR_ADD},      {"-", 0, MLC_TIR_SUB},       {"*", 1, MLC_TIR_MUL},
             {"/", 1, MLC_TIR_DIV},      {"//", 1, MLC_TIR_FLOORDIV}, {"%", 1, MLC_TIR_FLOORMOD},
             {"==", 2, MLC_TIR_EQ},      {"!=", 2, MLC_TIR_NE},       {"<", 2, MLC_TIR_LT},
             {"<=", 2, MLC_TIR_LE},      {">", 2, MLC_TIR_GT},        {">=", 2, MLC_TIR_GE}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (ops[i].level == level && text_is(t, ops[i].s)) {
      *op = ops[i].op;
      return 1;
    }
  return 0;
}

/* mul: unary (('*' | '/' | '//' | '%') unary)* ; add likewise */
static mlc_tir_expr *arith(parser *p, int level, int *h) {
  mlc_tir_expr *a = level ? unary(p, h) : arith(p, 1, h);
  mlc_tir_binop op;
  while (a && binop_at(cur(p), level, &op)) {
    const tok *t = cur(p);
    advance(p);
    int hb = 0;
    mlc_tir_expr *b = level ? unary(p, &hb) : arith(p, 1, &hb);
    if (hb > *h) *h = hb;
    *h += 1;
    if (!b || !height_ok(p, t, *h)) return NULL;
    a = mk_bin(p, op, a, b);
  }
  return a;
}

/* comparison: add [cmpop add] (comparisons do not chain) */
static mlc_tir_expr *comparison(parser *p, int *h) {
  mlc_tir_expr *a = arith(p, 0, h);
  mlc_tir_binop op;
  if (!a || !binop_at(cur(p), 2, &op)) return a;
  const tok *t = cur(p);
  advance(p);
  int hb = 0;
  mlc_tir_expr *b = arith(p, 0, &hb);
  if (!b) return NULL;
  if (binop_at(cur(p), 2, &op)) return fail(p, cur(p), "comparisons do not chain: add parentheses");
  if (hb > *h) *h = hb;
  *h += 1;
  if (!height_ok(p, t, *h)) return NULL;
  return mk_bin(p, op, a, b);
}

static mlc_tir_expr *not_test(parser *p, int *h) {
  if (!is_kw(cur(p), "not")) return comparison(p, h);
  const tok *t = cur(p);
  advance(p);
  if (++p->depth > MAX_DEPTH) return fail(p, t, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
  mlc_tir_expr *a = not_test(p, h);
  p->depth--;
  *h += 1;
  if (!a || !height_ok(p, t, *h)) return NULL;
  mlc_tir_expr *e = mk(p, MLC_TIR_NOT, a->dtype);
  if (e) {
    e->lanes = a->lanes;
    e->un.a = a;
  }
  return e;
}

/* or_test / and_test */
static mlc_tir_expr *logical(parser *p, int is_or, int *h) {
  mlc_tir_expr *a = is_or ? logical(p, 0, h) : not_test(p, h);
  while (a && is_kw(cur(p), is_or ? "or" : "and")) {
    const tok *t = cur(p);
    advance(p);
    int hb = 0;
    mlc_tir_expr *b = is_or ? logical(p, 0, &hb) : not_test(p, &hb);
    if (hb > *h) *h = hb;
    *h += 1;
    if (!b || !height_ok(p, t, *h)) return NULL;
    a = mk_bin(p, is_or ? MLC_TIR_OR : MLC_TIR_AND, a, b);
  }
  return a;
}

static mlc_tir_expr *expr(parser *p, int *h) {
  if (p->err) return NULL;
  *h = 0;
  if (++p->depth > MAX_DEPTH) return fail(p, cur(p), "expression nested too deeply (more than %d levels)", MAX_DEPTH);
  mlc_tir_expr *e = logical(p, 1, h);
  p->depth--;
  if (e && !height_ok(p, cur(p), *h)) return NULL;
  return e;
}

static mlc_tir_expr *expr1(parser *p) {
  int h;
  return expr(p, &h);
}

/* ---- statements ---------------------------------------------------------------------- */

static mlc_tir_stmt *stmt_list(parser *p);
static mlc_tir_stmt *stmt_list_until(parser *p, const tok *const *stop, int nstop);

static int end_line(parser *p) { return expect_kind(p, T_NEWLINE, "end of line"); }

/* ':' NEWLINE INDENT stmts DEDENT */
static mlc_tir_stmt *suite(parser *p) {
  if (!expect_op(p, ":", "before the indented block") || !end_line(p)) return NULL;
  const tok *t = cur(p);
  if (!expect_kind(p, T_INDENT, "an indented block")) return NULL;
  if (++p->depth > MAX_DEPTH) return fail(p, t, "statements nested too deeply (more than %d levels)", MAX_DEPTH);
  mlc_tir_stmt *s = stmt_list(p);
  p->depth--;
  if (!s || !expect_kind(p, T_DEDENT, "the end of the indented block")) return NULL;
  return s;
}

static mlc_tir_var *new_var(parser *p, const tok *name, const mlc_tir_expr *extent) {
  char *nm = tok_name(p, name);
  if (!nm) return NULL;
  mlc_tir_var *v = chk(p, mlc_tir_var_new(p->m, nm, int_dtype(extent->dtype) ? extent->dtype : MLC_DTYPE_I64));
  if (v && define(p, v->name, SYM_VAR, v)) return NULL;
  return v;
}

/* (a) or (a, b) after a loop kind: *mn, *ext (the '(' consumed). */
static int loop_range(parser *p, mlc_tir_expr **mn, mlc_tir_expr **ext) {
  mlc_tir_expr *a = expr1(p);
  if (!a) return -1;
  if (is_op(cur(p), ",") && !is_kw(at(p, 1), "thread") && !is_kw(at(p, 1), "annotations")) {
    advance(p);
    mlc_tir_expr *b = expr1(p);
    if (!b) return -1;
    *mn = a;
    *ext = range_extent(p, a, b, 0);
  } else {
    *ext = a;
    *mn = mk_int(p, int_dtype(a->dtype) ? a->dtype : MLC_DTYPE_I64, 0);
  }
  return *mn && *ext ? 0 : -1;
}

/* Annotations {"key": value, ...} of a loop (annotations=...) or a block
** (T.block_attr(...)), set on |st|: values are strings, True / False,
** integers, floats and T.float64("nan" / "inf" / "-inf"). */
static int annotations(parser *p, mlc_tir_stmt *st) {
  if (!expect_op(p, "{", "to open the annotations")) return -1;
  while (!accept_op(p, "}")) {
    const tok *kt = cur(p);
    if (kt->kind != T_STR) {
      expected(p, kt, "an annotation key string");
      return -1;
    }
    if (mlc_tir_stmt_annot(st, kt->str)) {
      fail(p, kt, "duplicate annotation \"%.32s\"", kt->str);
      return -1;
    }
    advance(p);
    if (!expect_op(p, ":", "after the annotation key")) return -1;
    mlc_tir_attr a = {kt->str, MLC_TIR_ATTR_INT, NULL, 0, 0};
    const tok *vt = cur(p);
    if (vt->kind == T_STR) {
      a.kind = MLC_TIR_ATTR_STR;
      a.s = vt->str;
      advance(p);
    } else if (is_kw(vt, "True") || is_kw(vt, "False")) {
      a.kind = MLC_TIR_ATTR_BOOL;
      a.i = is_kw(vt, "True");
      advance(p);
    } else if (is_t(p, 0, "float64")) {
      const tok *nt = t_member_at(p, 0);
      skip_t(p);
      mlc_tir_expr *e = typed_const(p, nt, MLC_DTYPE_F64);
      if (!e) return -1;
      a.kind = MLC_TIR_ATTR_FLOAT;
      a.f = e->float_value;
    } else {
      int neg = accept_op(p, "-");
      const tok *lit = cur(p);
      if (lit->kind == T_FLOAT) {
        char buf[MAX_NUMBER_CHARS + 2];
        snprintf(buf, sizeof buf, "%s%.*s", neg ? "-" : "", (int)lit->len, lit->s);
        a.kind = MLC_TIR_ATTR_FLOAT;
        a.f = strtod(buf, NULL);
        if (isinf(a.f)) {
          fail(p, lit, "number %.32s is out of range of float64", buf);
          return -1;
        }
        advance(p);
      } else if (lit->kind == T_INT) {
        if (lit->ovf || !int_fits(MLC_DTYPE_I64, neg, lit->ival, &a.i)) {
          fail(p, lit, "annotation \"%.32s\": integer out of range for int64", kt->str);
          return -1;
        }
        advance(p);
      } else {
        expected(p, lit, "a string, True, False, an integer or a float");
        return -1;
      }
    }
    if (!chk(p, mlc_tir_stmt_set_annot(p->m, st, &a))) return -1;
    if (!is_op(cur(p), "}") && !expect_op(p, ",", "or '}' between annotations")) return -1;
  }
  return 0;
}

static mlc_tir_stmt *for_stmt(parser *p) {
  advance(p); /* for */
  const tok **names = NULL;
  int nn = 0, capn = 0;
  do {
    if (cur(p)->kind != T_NAME) return expected(p, cur(p), "a loop variable");
    if (nn == MAX_DEPTH) return fail(p, cur(p), "too many loop variables (more than %d)", MAX_DEPTH);
    if (grow(p, (void **)&names, &capn, nn + 1, sizeof *names)) return NULL;
    names[nn++] = cur(p);
    advance(p);
  } while (accept_op(p, ","));
  if (!is_kw(cur(p), "in")) return expected(p, cur(p), "'in'");
  advance(p);
  const tok *kt = cur(p);
  int mark = p->nsyms;
  if (is_t(p, 0, "grid")) {
    skip_t(p);
    mlc_tir_expr **ext;
    int n, h = 0;
    if (call_args(p, "after T.grid", &ext, &n, &h)) return NULL;
    if (n != nn) return fail(p, kt, "T.grid has %d extent%s for %d loop variable%s", n, n == 1 ? "" : "s", nn, nn == 1 ? "" : "s");
    if (p->depth + n > MAX_DEPTH) return fail(p, kt, "statements nested too deeply (more than %d levels)", MAX_DEPTH);
    mlc_tir_var **vars = chk(p, MLC_ARENA_ARRAY(p->scratch, (size_t)n, mlc_tir_var *));
    if (!vars) return NULL;
    for (int i = 0; i < n; i++)
      if (!(vars[i] = new_var(p, names[i], ext[i]))) return NULL;
    p->depth += n;
    mlc_tir_stmt *body = suite(p);
    p->depth -= n;
    p->nsyms = mark;
    for (int i = n; body && i-- > 0;) {
      mlc_tir_expr *z = mk_int(p, vars[i]->dtype, 0);
      body = z ? chk(p, mlc_tir_for(p->m, vars[i], z, ext[i], MLC_TIR_FOR_SERIAL, NULL, body)) : NULL;
    }
    return body;
  }
  mlc_tir_for_kind kind;
  if (is_kw(kt, "range")) {
    kind = MLC_TIR_FOR_SERIAL;
    advance(p);
  } else {
    static const mlc_tir_for_kind kinds[] = {MLC_TIR_FOR_PARALLEL, MLC_TIR_FOR_VECTORIZED, MLC_TIR_FOR_UNROLLED,
                                             MLC_TIR_FOR_THREAD_BINDING, MLC_TIR_FOR_SERIAL};
    size_t i = 0;
    while (i < 5 && !is_t(p, 0, mlc_tir_for_kind_name(kinds[i]))) i++;
    if (i == 5)
      return expected(p, kt, "range, T.grid, T.parallel, T.vectorized, T.unroll, T.thread_binding or T.serial");
    kind = kinds[i];
    skip_t(p);
  }
  if (nn != 1) return fail(p, names[1], "only T.grid takes several loop variables");
  if (!expect_op(p, "(", "after the loop kind")) return NULL;
  mlc_tir_expr *mn, *ext;
  if (loop_range(p, &mn, &ext)) return NULL;
  const char *thread = NULL;
  if (kind == MLC_TIR_FOR_THREAD_BINDING) {
    if (!expect_op(p, ",", "before thread=")) return NULL;
    if (!is_kw(cur(p), "thread")) return expected(p, cur(p), "thread=");
    advance(p);
    if (!expect_op(p, "=", "after thread")) return NULL;
    if (cur(p)->kind != T_STR) return expected(p, cur(p), "a thread tag string");
    thread = cur(p)->str;
    advance(p);
  }
  mlc_tir_stmt held = {.kind = MLC_TIR_FOR}; /* the annotations until the loop exists */
  if (accept_op(p, ",")) {
    if (!is_kw(cur(p), "annotations")) return expected(p, cur(p), "annotations=");
    advance(p);
    if (!expect_op(p, "=", "after annotations") || annotations(p, &held)) return NULL;
  }
  if (!expect_op(p, ")", "after the loop range")) return NULL;
  mlc_tir_var *v = new_var(p, names[0], ext);
  if (!v) return NULL;
  mlc_tir_stmt *body = suite(p);
  p->nsyms = mark;
  if (!body) return NULL;
  mlc_tir_stmt *r = chk(p, mlc_tir_for(p->m, v, mn, ext, kind, thread, body));
  if (r) {
    r->loop.nannots = held.loop.nannots;
    r->loop.annots = held.loop.annots;
  }
  return r;
}

/* Regions of T.reads / T.writes (the '(' consumed). */
static int regions(parser *p, mlc_tir_region **out, int *n) {
  int cap = 0;
  *n = 0;
  *out = NULL;
  if (accept_op(p, ")")) return 0;
  do {
    const tok *bt = cur(p);
    if (bt->kind != T_NAME) return expected(p, bt, "a buffer region"), -1;
    mlc_tir_buffer *b = lookup_buffer(p, bt);
    if (!b) return -1;
    advance(p);
    if (!expect_op(p, "[", "after the buffer of a region")) return -1;
    mlc_tir_expr *mins[MAX_DEPTH], *exts[MAX_DEPTH];
    int nd = 0;
    if (!accept_op(p, "]")) {
      do {
        if (nd == MAX_DEPTH) return fail(p, cur(p), "region has too many dimensions"), -1;
        mlc_tir_expr *mn = expr1(p), *ext;
        if (!mn) return -1;
        if (accept_op(p, ":")) {
          mlc_tir_expr *end = expr1(p);
          if (!end || !(ext = range_extent(p, mn, end, 1))) return -1;
        } else {
          ext = mk_int(p, int_dtype(mn->dtype) ? mn->dtype : MLC_DTYPE_I64, 1);
          if (!ext) return -1;
        }
        mins[nd] = mn;
        exts[nd] = ext;
        nd++;
      } while (accept_op(p, ","));
      if (!expect_op(p, "]", "after the region")) return -1;
    }
    if (grow(p, (void **)out, &cap, *n + 1, sizeof **out)) return -1;
    mlc_tir_region *r = &(*out)[(*n)++];
    r->buffer = b;
    r->n = nd;
    r->min = nd ? chk(p, mlc_arena_memdup(p->scratch, mins, (size_t)nd * sizeof *mins)) : NULL;
    r->extent = nd ? chk(p, mlc_arena_memdup(p->scratch, exts, (size_t)nd * sizeof *exts)) : NULL;
    if (nd && (!r->min || !r->extent)) return -1;
  } while (accept_op(p, ","));
  return expect_op(p, ")", "after the regions") ? 0 : -1;
}

static mlc_tir_stmt *block_stmt(parser *p) {
  advance(p); /* with */
  if (is_t(p, 0, "init")) return fail(p, cur(p), "with T.init() outside a block's header");
  if (!expect_t(p, "block") || !expect_op(p, "(", "after T.block")) return NULL;
  if (cur(p)->kind != T_STR) return expected(p, cur(p), "the block's name string");
  const char *name = cur(p)->str;
  advance(p);
  if (!expect_op(p, ")", "after the block name") || !expect_op(p, ":", "after T.block(...)") || !end_line(p))
    return NULL;
  const tok *it = cur(p);
  if (!expect_kind(p, T_INDENT, "the block's indented body")) return NULL;
  if (++p->depth > MAX_DEPTH) return fail(p, it, "statements nested too deeply (more than %d levels)", MAX_DEPTH);
  int mark = p->nsyms;
  mlc_tir_iter_var *iters = NULL;
  int niters = 0, cap = 0;
  /* NAME = T.axis.spatial|reduce(dom, binding) */
  while (cur(p)->kind == T_NAME && is_op(at(p, 1), "=") && is_t(p, 2, "axis")) {
    const tok *name_t = cur(p);
    p->pos += 5; /* NAME = T.axis */
    if (!expect_op(p, ".", "after T.axis")) return NULL;
    mlc_tir_iter_kind kind;
    if (is_kw(cur(p), "spatial")) kind = MLC_TIR_ITER_SPATIAL;
    else if (is_kw(cur(p), "reduce")) kind = MLC_TIR_ITER_REDUCE;
    else return expected(p, cur(p), "T.axis.spatial or T.axis.reduce");
    advance(p);
    if (!expect_op(p, "(", "after T.axis kind")) return NULL;
    mlc_tir_expr *mn, *ext;
    /* "(min, end)" is a pair when a top-level comma follows its first expression */
    int pair = 0;
    if (is_op(cur(p), "(")) {
      size_t save = p->pos;
      advance(p);
      mlc_tir_expr *a = expr1(p);
      if (!a) return NULL;
      if (accept_op(p, ",")) {
        mlc_tir_expr *b = expr1(p);
        if (!b || !expect_op(p, ")", "after the axis range")) return NULL;
        mn = a;
        if (!(ext = range_extent(p, a, b, 0))) return NULL;
        pair = 1;
      } else {
        p->pos = save;
      }
    }
    if (!pair) {
      if (!(ext = expr1(p))) return NULL;
      if (!(mn = mk_int(p, int_dtype(ext->dtype) ? ext->dtype : MLC_DTYPE_I64, 0))) return NULL;
    }
    if (!expect_op(p, ",", "before the axis binding")) return NULL;
    mlc_tir_expr *bind = expr1(p);
    if (!bind || !expect_op(p, ")", "after the axis binding") || !end_line(p)) return NULL;
    if (grow(p, (void **)&iters, &cap, niters + 1, sizeof *iters)) return NULL;
    mlc_tir_var *v = new_var(p, name_t, ext);
    if (!v) return NULL;
    iters[niters].var = v;
    iters[niters].kind = kind;
    iters[niters].min = mn;
    iters[niters].extent = ext;
    iters[niters].binding = bind;
    niters++;
  }
  mlc_tir_expr *pred = NULL;
  if (is_t(p, 0, "where")) {
    skip_t(p);
    if (!expect_op(p, "(", "after T.where") || !(pred = expr1(p)) || !expect_op(p, ")", "after the predicate") ||
        !end_line(p))
      return NULL;
  }
  mlc_tir_region *reads = NULL, *writes = NULL;
  int nreads = 0, nwrites = 0, have_regions = 0;
  if (is_t(p, 0, "reads")) {
    skip_t(p);
    if (!expect_op(p, "(", "after T.reads") || regions(p, &reads, &nreads) || !end_line(p)) return NULL;
    have_regions = 1;
  }
  if (is_t(p, 0, "writes")) {
    skip_t(p);
    if (!expect_op(p, "(", "after T.writes") || regions(p, &writes, &nwrites) || !end_line(p)) return NULL;
    have_regions = 1;
  }
  mlc_tir_stmt held = {.kind = MLC_TIR_BLOCK}; /* the annotations until the block exists */
  if (is_t(p, 0, "block_attr")) {
    skip_t(p);
    if (!expect_op(p, "(", "after T.block_attr") || annotations(p, &held) ||
        !expect_op(p, ")", "after the block attributes") || !end_line(p))
      return NULL;
  }
  mlc_tir_stmt *init = NULL;
  if (is_kw(cur(p), "with") && is_t(p, 1, "init")) {
    p->pos += 4;
    if (!expect_op(p, "(", "after T.init") || !expect_op(p, ")", "after T.init(") || !(init = suite(p)))
      return NULL;
  }
  mlc_tir_stmt *body = stmt_list(p);
  p->nsyms = mark;
  p->depth--;
  if (!body || !expect_kind(p, T_DEDENT, "the end of the block")) return NULL;
  mlc_tir_stmt *s = chk(p, mlc_tir_block(p->m, name, niters, iters, init, body));
  if (!s) return NULL;
  mlc_tir_block_set_predicate(s, pred);
  if (have_regions && !chk(p, mlc_tir_block_set_regions(p->m, s, nreads, reads, nwrites, writes))) return NULL;
  s->block.nannots = held.block.nannots;
  s->block.annots = held.block.annots;
  return s;
}

static mlc_tir_stmt *if_stmt(parser *p) {
  advance(p);
  mlc_tir_expr *c = expr1(p);
  if (!c) return NULL;
  mlc_tir_stmt *t = suite(p), *f = NULL;
  if (!t) return NULL;
  if (is_kw(cur(p), "else")) {
    advance(p);
    if (!(f = suite(p))) return NULL;
  }
  return chk(p, mlc_tir_if(p->m, c, t, f));
}

static mlc_tir_stmt *assert_stmt(parser *p) {
  advance(p);
  mlc_tir_expr *c = expr1(p);
  if (!c || !expect_op(p, ",", "after the assert condition") || !expect_op(p, "(", "before the assert's op"))
    return NULL;
  if (cur(p)->kind != T_STR) return expected(p, cur(p), "the assert's op string");
  const char *op = cur(p)->str;
  advance(p);
  if (!expect_op(p, ",", "after the assert's op")) return NULL;
  if (cur(p)->kind != T_STR) return expected(p, cur(p), "the assert's message string");
  const char *msg = cur(p)->str;
  advance(p);
  mlc_tir_expr *vals[MLC_TIR_ASSERT_MAX_VALS];
  int n = 0;
  while (accept_op(p, ",")) {
    if (n == MLC_TIR_ASSERT_MAX_VALS)
      return fail(p, cur(p), "an assert reports at most %d values", MLC_TIR_ASSERT_MAX_VALS);
    if (!(vals[n++] = expr1(p))) return NULL;
  }
  if (!expect_op(p, ")", "after the assert's values") || !end_line(p)) return NULL;
  return chk(p, mlc_tir_assert(p->m, c, op, msg, n, vals));
}

/* "(d0, d1, ...)" shape; '(' current. */
static int shape(parser *p, mlc_tir_expr ***out, int *rank) {
  int cap = 0;
  *rank = 0;
  *out = NULL;
  if (!expect_op(p, "(", "to open a shape")) return -1;
  while (!accept_op(p, ")")) {
    if (*rank == MAX_DEPTH) return fail(p, cur(p), "shape has too many dimensions"), -1;
    mlc_tir_expr *d = expr1(p);
    if (!d || grow(p, (void **)out, &cap, *rank + 1, sizeof **out)) return -1;
    (*out)[(*rank)++] = d;
    if (!is_op(cur(p), ")") && !expect_op(p, ",", "or ')' in a shape")) return -1;
  }
  return 0;
}

/* NAME = T.alloc_buffer(shape, "dtype"[, scope="local" / "shared"]): the buffer. */
static mlc_tir_buffer *alloc_header(parser *p) {
  const tok *name = cur(p);
  p->pos += 2;
  skip_t(p);
  if (!expect_op(p, "(", "after T.alloc_buffer")) return NULL;
  mlc_tir_expr **shp;
  int rank;
  if (shape(p, &shp, &rank) || !expect_op(p, ",", "after the shape")) return NULL;
  mlc_dtype t = dtype_of_str(p, cur(p));
  if (t == MLC_DTYPE_INVALID) return NULL;
  mlc_tir_scope scope = MLC_TIR_SCOPE_GLOBAL;
  if (accept_op(p, ",")) {
    if (!is_kw(cur(p), "scope")) return expected(p, cur(p), "scope=");
    advance(p);
    if (!expect_op(p, "=", "after scope")) return NULL;
    const tok *st = cur(p);
    if (st->kind != T_STR) return expected(p, st, "a scope string");
    if (strcmp(st->str, "local") == 0) scope = MLC_TIR_SCOPE_LOCAL;
    else if (strcmp(st->str, "shared") == 0) scope = MLC_TIR_SCOPE_SHARED;
    else if (strcmp(st->str, "global") != 0) return fail(p, st, "unknown scope \"%.32s\"", st->str);
    advance(p);
  }
  if (!expect_op(p, ")", "after T.alloc_buffer arguments") || !end_line(p)) return NULL;
  char *nm = tok_name(p, name);
  return nm ? chk(p, mlc_tir_buffer_new(p->m, nm, t, rank, shp, scope)) : NULL;
}

static mlc_tir_stmt *store_stmt(parser *p) {
  mlc_tir_buffer *b = lookup_buffer(p, cur(p));
  if (!b) return NULL;
  advance(p);
  advance(p); /* [ */
  mlc_tir_expr **idx;
  int n, h = 0;
  if (indices(p, &idx, &n, &h) || !expect_op(p, "=", "after the stored-to element")) return NULL;
  mlc_tir_expr *v = expr1(p);
  if (!v || !end_line(p)) return NULL;
  return chk(p, mlc_tir_store(p->m, b, n, idx, v));
}

static mlc_tir_stmt *stmt(parser *p) {
  const tok *t = cur(p);
  if (is_kw(t, "for")) return for_stmt(p);
  if (is_kw(t, "with")) return block_stmt(p);
  if (is_kw(t, "if")) return if_stmt(p);
  if (is_kw(t, "assert")) return assert_stmt(p);
  if (is_t(p, 0, "evaluate")) {
    skip_t(p);
    mlc_tir_expr *e;
    if (!expect_op(p, "(", "after T.evaluate") || !(e = expr1(p)) || !expect_op(p, ")", "after T.evaluate(...") ||
        !end_line(p))
      return NULL;
    return chk(p, mlc_tir_evaluate(p->m, e));
  }
  if (t->kind == T_NAME && is_op(at(p, 1), "[")) return store_stmt(p);
  if (is_t(p, 0, "where") || is_t(p, 0, "reads") || is_t(p, 0, "writes") || is_t(p, 0, "block_attr"))
    return fail(p, t, "T.%.*s belongs at the start of a block, before its body", (int)at(p, 2)->len, at(p, 2)->s);
  if (t->kind == T_NAME && is_op(at(p, 1), "=") && is_t(p, 2, "axis"))
    return fail(p, t, "T.axis (of %.*s) belongs at the start of a block, before its body", (int)(t->len < 64 ? t->len : 64),
                t->s);
  if (is_kw(t, "else")) return fail(p, t, "'else' without 'if'");
  return expected(p, t, "a statement");
}

static int is_alloc_line(const parser *p) {
  return cur(p)->kind == T_NAME && is_op(at(p, 1), "=") && is_t(p, 2, "alloc_buffer");
}

/* Statements up to the end of the indented block; an alloc_buffer takes the
** statements after it as its body, up to an alloc_buffer of the same name
** in the same block (the printer brings a name back into use only once the
** first buffer is out of scope, so the two are siblings).  |stop| lists
** those names (|nstop|; the enclosing allocs of this block). */
static mlc_tir_stmt *stmt_list_until(parser *p, const tok *const *stop, int nstop) {
  mlc_tir_stmt **v = NULL;
  int n = 0, cap = 0;
  while (cur(p)->kind != T_DEDENT && cur(p)->kind != T_EOF) {
    mlc_tir_stmt *s;
    const tok *t = cur(p);
    if (is_alloc_line(p)) {
      int k = 0;
      while (k < nstop && !(stop[k]->len == t->len && memcmp(stop[k]->s, t->s, t->len) == 0)) k++;
      if (k < nstop && n > 0) break;
      mlc_tir_buffer *b = alloc_header(p);
      if (!b) return NULL;
      if (cur(p)->kind == T_DEDENT || cur(p)->kind == T_EOF)
        return fail(p, t, "T.alloc_buffer %s: no statement follows it in its block", b->name);
      int mark = p->nsyms;
      if (define(p, b->name, SYM_BUF, b)) return NULL;
      if (++p->depth > MAX_DEPTH) return fail(p, t, "statements nested too deeply (more than %d levels)", MAX_DEPTH);
      const tok **st = chk(p, MLC_ARENA_ARRAY(p->scratch, (size_t)nstop + 1, const tok *));
      if (!st) return NULL;
      if (nstop) memcpy(st, stop, (size_t)nstop * sizeof *st);
      st[nstop] = t;
      mlc_tir_stmt *body = stmt_list_until(p, st, nstop + 1);
      p->depth--;
      p->nsyms = mark;
      if (!body || !(s = chk(p, mlc_tir_allocate(p->m, b, body)))) return NULL;
    } else if (t->kind == T_INDENT) {
      return fail(p, t, "unexpected indent");
    } else if (!(s = stmt(p))) {
      return NULL;
    }
    if (grow(p, (void **)&v, &cap, n + 1, sizeof *v)) return NULL;
    v[n++] = s;
  }
  if (n == 0) return expected(p, cur(p), "a statement");
  return chk(p, mlc_tir_seq(p->m, n, v));
}

static mlc_tir_stmt *stmt_list(parser *p) { return stmt_list_until(p, NULL, 0); }

/* ---- functions ----------------------------------------------------------------------- */

typedef struct pending_scalar {
  mlc_tir_var *var;
  const tok *at;
  const char *comment;
} pending_scalar;

/* "A.shape[3]" (spaces around allowed): the name and dim, or 0. */
static int parse_shape_comment(const char *c, const char **name, size_t *nlen, int *dim) {
  while (*c == ' ') c++;
  const char *s = c;
  while (is_alpha(*c) || is_digit(*c)) c++;
  if (c == s || strncmp(c, ".shape[", 7) != 0) return 0;
  *name = s;
  *nlen = (size_t)(c - s);
  c += 7;
  long d = 0;
  if (!is_digit(*c)) return 0;
  while (is_digit(*c) && d < 1000000) d = d * 10 + (*c++ - '0');
  if (*c != ']') return 0;
  c++;
  while (*c == ' ') c++;
  if (*c) return 0;
  *dim = (int)d;
  return 1;
}

static mlc_tir_func *func(parser *p) {
  const tok *t0 = cur(p);
  if (!is_op(t0, "@")) return expected(p, t0, "@T.prim_func");
  advance(p);
  if (!expect_t(p, "prim_func") || !end_line(p)) return NULL;
  if (!is_kw(cur(p), "def")) return expected(p, cur(p), "def");
  advance(p);
  const tok *fname = cur(p);
  if (!expect_kind(p, T_NAME, "the function name") || !expect_op(p, "(", "after the function name")) return NULL;
  mlc_tir_buffer **params = NULL;
  const char **pnames = NULL; /* names as printed (the handle's without var_) */
  int np = 0, capp = 0, capn = 0;
  int mark = p->nsyms;
  while (!accept_op(p, ")")) {
    const tok *pt = cur(p);
    if (!expect_kind(p, T_NAME, "a parameter name") || !expect_op(p, ":", "after the parameter name")) return NULL;
    if (grow(p, (void **)&params, &capp, np + 1, sizeof *params) ||
        grow(p, (void **)&pnames, &capn, np + 1, sizeof *pnames))
      return NULL;
    char *nm = tok_name(p, pt);
    if (!nm) return NULL;
    if (is_t(p, 0, "handle")) {
      skip_t(p);
      if (strncmp(nm, "var_", 4) != 0 || !nm[4]) return fail(p, pt, "a T.handle parameter is named var_NAME");
      params[np] = NULL;
      pnames[np] = nm + 4;
      if (define(p, nm, SYM_HANDLE, (void *)(intptr_t)(np + 1))) return NULL;
    } else {
      if (!expect_t(p, "Buffer") || !expect_op(p, "(", "after T.Buffer")) return NULL;
      mlc_tir_expr **shp;
      int rank;
      if (shape(p, &shp, &rank) || !expect_op(p, ",", "after the shape")) return NULL;
      mlc_dtype t = dtype_of_str(p, cur(p));
      if (t == MLC_DTYPE_INVALID || !expect_op(p, ")", "after the dtype")) return NULL;
      mlc_tir_buffer *b = chk(p, mlc_tir_buffer_new(p->m, nm, t, rank, shp, MLC_TIR_SCOPE_GLOBAL));
      if (!b || define(p, b->name, SYM_BUF, b)) return NULL;
      params[np] = b;
      pnames[np] = b->name;
    }
    np++;
    if (!is_op(cur(p), ")") && !expect_op(p, ",", "or ')' between parameters")) return NULL;
  }
  if (!expect_op(p, ":", "after the parameters") || !end_line(p) || !expect_kind(p, T_INDENT, "the function body"))
    return NULL;
  mlc_tir_attr *attrs = NULL;
  int nattrs = 0, capa = 0;
  pending_scalar *sc = NULL;
  int nsc = 0, caps = 0;
  mlc_tir_buffer **views = NULL;
  int nviews = 0, capv = 0;
  for (;;) {
    const tok *t = cur(p);
    if (is_t(p, 0, "func_attr")) {
      skip_t(p);
      if (!expect_op(p, "(", "after T.func_attr") || !expect_op(p, "{", "to open the attributes")) return NULL;
      while (!accept_op(p, "}")) {
        const tok *kt = cur(p);
        if (kt->kind != T_STR) return expected(p, kt, "an attribute name string");
        for (int i = 0; i < nattrs; i++)
          if (strcmp(attrs[i].key, kt->str) == 0) return fail(p, kt, "duplicate attribute \"%.32s\"", kt->str);
        advance(p);
        if (!expect_op(p, ":", "after the attribute name")) return NULL;
        if (grow(p, (void **)&attrs, &capa, nattrs + 1, sizeof *attrs)) return NULL;
        mlc_tir_attr *a = &attrs[nattrs++];
        a->key = kt->str;
        const tok *vt = cur(p);
        if (vt->kind == T_STR) {
          a->kind = MLC_TIR_ATTR_STR;
          a->s = vt->str;
          advance(p);
        } else if (is_kw(vt, "True") || is_kw(vt, "False")) {
          a->kind = MLC_TIR_ATTR_BOOL;
          a->i = is_kw(vt, "True");
          advance(p);
        } else {
          int neg;
          uint64_t mag;
          if (int_literal(p, &neg, &mag, "a string, True, False or an integer")) return NULL;
          if (!int_fits(MLC_DTYPE_I64, neg, mag, &a->i))
            return fail(p, vt, "attribute \"%.32s\": integer out of range for int64", kt->str);
          a->kind = MLC_TIR_ATTR_INT;
        }
        if (!is_op(cur(p), "}") && !expect_op(p, ",", "or '}' between attributes")) return NULL;
      }
      if (!expect_op(p, ")", "after the attributes") || !end_line(p)) return NULL;
      continue;
    }
    const tok *m = t_member_at(p, 2);
    if (t->kind == T_NAME && is_op(at(p, 1), "=") && m && text_is(m, "match_buffer")) {
      p->pos += 5;
      if (!expect_op(p, "(", "after T.match_buffer")) return NULL;
      const tok *ht = cur(p);
      if (ht->kind != T_NAME) return expected(p, ht, "a T.handle parameter");
      const sym *hs = lookup(p, ht);
      if (!hs || hs->kind != SYM_HANDLE)
        return fail(p, ht, "'%.*s' is not an unmatched T.handle parameter", (int)(ht->len < 64 ? ht->len : 64), ht->s);
      int idx = (int)(intptr_t)hs->ptr - 1;
      advance(p);
      mlc_tir_expr **shp;
      int rank;
      if (!expect_op(p, ",", "after the handle") || shape(p, &shp, &rank) || !expect_op(p, ",", "after the shape"))
        return NULL;
      mlc_dtype dt = dtype_of_str(p, cur(p));
      if (dt == MLC_DTYPE_INVALID || !expect_op(p, ")", "after the dtype") || !end_line(p)) return NULL;
      char *nm = tok_name(p, t);
      mlc_tir_buffer *b = nm ? chk(p, mlc_tir_buffer_new(p->m, nm, dt, rank, shp, MLC_TIR_SCOPE_GLOBAL)) : NULL;
      if (!b) return NULL;
      params[idx] = b;
      pnames[idx] = b->name;
      /* the handle is used up */
      for (int i = p->nsyms; i-- > 0;)
        if (p->syms[i].kind == SYM_HANDLE && p->syms[i].ptr == (void *)(intptr_t)(idx + 1)) p->syms[i].kind = SYM_USED_HANDLE;
      if (define(p, b->name, SYM_BUF, b)) return NULL;
      continue;
    }
    if (t->kind == T_NAME && is_op(at(p, 1), "=") && m && text_is(m, "Buffer")) {
      /* NAME = T.Buffer(shape, "dtype", data=PARAM.data): a view of a
      ** parameter's memory (a lowered function's flat view) */
      p->pos += 5;
      mlc_tir_expr **shp;
      int rank;
      if (!expect_op(p, "(", "after T.Buffer") || shape(p, &shp, &rank) || !expect_op(p, ",", "after the shape"))
        return NULL;
      mlc_dtype vt = dtype_of_str(p, cur(p));
      if (vt == MLC_DTYPE_INVALID || !expect_op(p, ",", "after the dtype")) return NULL;
      if (cur(p)->kind != T_NAME || !text_is(cur(p), "data")) return expected(p, cur(p), "data=PARAM.data");
      advance(p);
      if (!expect_op(p, "=", "after data")) return NULL;
      const tok *bt = cur(p);
      if (bt->kind != T_NAME) return expected(p, bt, "the name of a parameter");
      mlc_tir_buffer *base = lookup_buffer(p, bt);
      if (!base) return NULL;
      int is_param = 0;
      for (int i = 0; i < np; i++) is_param |= params[i] == base;
      if (!is_param) return fail(p, bt, "a view names a parameter's memory; '%.*s' is not a parameter", (int)(bt->len < 64 ? bt->len : 64), bt->s);
      advance(p);
      if (!expect_op(p, ".", "after the parameter")) return NULL;
      if (cur(p)->kind != T_NAME || !text_is(cur(p), "data")) return expected(p, cur(p), "data");
      advance(p);
      if (!expect_op(p, ")", "after data=PARAM.data") || !end_line(p)) return NULL;
      if (vt != base->dtype)
        return fail(p, t, "view of %s: dtype %s, the parameter's is %s", base->name, mlc_dtype_name(vt),
                    mlc_dtype_name(base->dtype));
      char *nm = tok_name(p, t);
      mlc_tir_buffer *v = nm ? chk(p, mlc_tir_buffer_view(p->m, base, rank, shp)) : NULL;
      if (!v || !(v->name = chk(p, mlc_arena_strdup(p->m->arena, nm)))) return NULL;
      if (define(p, v->name, SYM_BUF, v)) return NULL;
      if (grow(p, (void **)&views, &capv, nviews + 1, sizeof *views)) return NULL;
      views[nviews++] = v;
      continue;
    }
    mlc_dtype dt = MLC_DTYPE_INVALID;
    if (t->kind == T_NAME && is_op(at(p, 1), "=") && m && m->len < 16 && is_op(at(p, 5), "(") && is_op(at(p, 6), ")")) {
      char nm[16];
      memcpy(nm, m->s, m->len);
      nm[m->len] = 0;
      dt = mlc_dtype_from_name(nm);
    }
    if (dt == MLC_DTYPE_INVALID) break;
    if (!int_dtype(dt)) return fail(p, m, "a scalar parameter is an integer, not %s", mlc_dtype_name(dt));
    p->pos += 7;
    const char *comment = cur(p)->comment;
    if (!end_line(p)) return NULL;
    char *nm = tok_name(p, t);
    mlc_tir_var *v = nm ? chk(p, mlc_tir_var_new(p->m, nm, dt)) : NULL;
    if (!v || define(p, v->name, SYM_VAR, v)) return NULL;
    if (grow(p, (void **)&sc, &caps, nsc + 1, sizeof *sc)) return NULL;
    sc[nsc].var = v;
    sc[nsc].at = t;
    sc[nsc].comment = comment;
    nsc++;
  }
  for (int i = 0; i < np; i++)
    if (!params[i]) return fail(p, fname, "parameter var_%s is never matched with T.match_buffer", pnames[i]);
  mlc_tir_stmt *body = stmt_list(p);
  p->nsyms = mark;
  if (!body || !expect_kind(p, T_DEDENT, "the end of the function")) return NULL;
  char *name = tok_name(p, fname);
  mlc_tir_func *f = name ? chk(p, mlc_tir_func_new(p->m, name, np, params, body)) : NULL;
  if (!f) return NULL;
  for (int i = 0; i < nattrs; i++) {
    mlc_status s = attrs[i].kind == MLC_TIR_ATTR_STR    ? mlc_tir_func_set_attr_str(p->m, f, attrs[i].key, attrs[i].s)
                   : attrs[i].kind == MLC_TIR_ATTR_BOOL ? mlc_tir_func_set_attr_bool(p->m, f, attrs[i].key, (int)attrs[i].i)
                                                        : mlc_tir_func_set_attr_int(p->m, f, attrs[i].key, attrs[i].i);
    if (s) {
      p->err = s;
      return NULL;
    }
  }
  for (int i = 0; i < nviews; i++) {
    mlc_status s = mlc_tir_func_add_view(p->m, f, views[i]);
    if (s) {
      p->err = s;
      return NULL;
    }
  }
  for (int i = 0; i < nsc; i++) {
    int param = -1, dim = -1;
    const char *pn;
    size_t pl;
    if (sc[i].comment && parse_shape_comment(sc[i].comment, &pn, &pl, &dim)) {
      for (int k = 0; k < np && param < 0; k++)
        if (strlen(pnames[k]) == pl && memcmp(pnames[k], pn, pl) == 0) param = k;
      if (param < 0) return fail(p, sc[i].at, "scalar %s: no parameter named %.*s", sc[i].var->name, (int)pl, pn);
    } else {
      /* no binding comment: the first dimension that is exactly the scalar */
      for (int k = 0; k < np && param < 0; k++)
        for (int d = 0; d < params[k]->rank && param < 0; d++)
          if (params[k]->shape[d]->kind == MLC_TIR_VAR_REF && params[k]->shape[d]->var == sc[i].var) {
            param = k;
            dim = d;
          }
      if (param < 0)
        return fail(p, sc[i].at, "scalar %s is not a dimension of any parameter (bind it with '# A.shape[0]')",
                    sc[i].var->name);
    }
    mlc_status s = mlc_tir_func_add_scalar(p->m, f, sc[i].var, param, dim);
    if (s) {
      fail(p, sc[i].at, "%s", mlc_status_message(s));
      mlc_status_free(s);
      return NULL;
    }
  }
  return f;
}

/* ---- entry points ------------------------------------------------------------------------ */

static mlc_status parse_all(mlc_tir_module *m, const char *src, size_t len, const char *srcname, int one,
                            mlc_tir_func **out_one) {
  parser p;
  memset(&p, 0, sizeof p);
  p.m = m;
  p.src = src ? src : "";
  p.len = src ? len : 0;
  p.srcname = srcname ? srcname : "<tir>";
  p.scratch = mlc_arena_create(mlc_allocator_default());
  if (!p.scratch) return mlc_oom();
  mlc_tir_func **fs = NULL;
  int nf = 0, capf = 0;
  if (lex(&p) == 0) {
    while (!p.err && cur(&p)->kind == T_NEWLINE) advance(&p);
    while (!p.err && cur(&p)->kind != T_EOF) {
      if (one && nf == 1) {
        fail(&p, cur(&p), "expected one prim function, found another");
        break;
      }
      const tok *start = cur(&p);
      mlc_tir_func *f = func(&p);
      if (!f) break;
      for (int i = 0; i < nf && !p.err; i++)
        if (strcmp(fs[i]->name, f->name) == 0) fail(&p, start, "duplicate prim func \"%s\"", f->name);
      if (!one && !p.err && mlc_tir_module_find(m, f->name))
        fail(&p, start, "prim func \"%s\" is already in the module", f->name);
      if (p.err || grow(&p, (void **)&fs, &capf, nf + 1, sizeof *fs)) break;
      fs[nf++] = f;
    }
    if (!p.err && one && nf == 0) expected(&p, cur(&p), "@T.prim_func");
  }
  if (!p.err && mlc_tir_module_oom(m)) oom(&p);
  if (!p.err) {
    if (one) {
      *out_one = fs[0];
    } else {
      for (int i = 0; i < nf && !p.err; i++) p.err = mlc_tir_module_add(m, fs[i]);
    }
  }
  mlc_arena_destroy(p.scratch);
  return p.err;
}

mlc_status mlc_tir_parse_module(mlc_tir_module *m, const char *src, size_t len, const char *srcname) {
  return parse_all(m, src, len, srcname, 0, NULL);
}

mlc_status mlc_tir_parse_func(mlc_tir_module *m, const char *src, size_t len, const char *srcname,
                              mlc_tir_func **out) {
  *out = NULL;
  return parse_all(m, src, len, srcname, 1, out);
}
