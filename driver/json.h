/*
** json.h: a strict JSON reader and writer for what inspect reads back from
** a compiled model (its manifest).
**
** The manifest of a model.so is text from a file that anyone may have
** written, so inspect never copies it into its own output as is: it parses
** it here (RFC 8259 grammar, nesting at most MLC_JSON_MAX_DEPTH deep, no
** NUL in strings) and writes what it shows with mlc_json_write, which
** escapes every string again.  Anything else is an error that says where
** the text went wrong; never a crash.
**
** A parsed document lives in one arena: mlc_json_free frees all of it.
*/
#ifndef MLC_DRIVER_JSON_H
#define MLC_DRIVER_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "base/strbuf.h"

#define MLC_JSON_MAX_DEPTH 64

typedef enum mlc_json_kind {
  MLC_JSON_NULL,
  MLC_JSON_BOOL,
  MLC_JSON_NUMBER,
  MLC_JSON_STRING,
  MLC_JSON_ARRAY,
  MLC_JSON_OBJECT
} mlc_json_kind;

typedef struct mlc_json mlc_json;
struct mlc_json {
  mlc_json_kind kind;
  int boolean;        /* BOOL */
  const char *text;   /* NUMBER: its text as written (checked against the grammar) */
  const char *str;    /* STRING: the decoded bytes, NUL-terminated (no NUL inside) */
  size_t len;         /* STRING: bytes of |str| */
  int n;              /* ARRAY, OBJECT: number of items */
  mlc_json **items;   /* ARRAY, OBJECT: the values */
  const char **keys;  /* OBJECT: the keys (decoded, NUL-terminated) */
};

typedef struct mlc_json_doc mlc_json_doc;

/* Parses |len| bytes of |text| (one JSON value, surrounding white space
** allowed).  *|out| transferred (mlc_json_free); the root is
** mlc_json_root(*out).  An error names the byte offset and what was
** expected. */
MLC_MUST_USE mlc_status mlc_json_parse(const char *text, size_t len, mlc_json_doc **out);
const mlc_json *mlc_json_root(const mlc_json_doc *d);
void mlc_json_free(mlc_json_doc *d);

/* The value of |key| in object |obj| (the last one when repeated), or NULL
** (also when |obj| is NULL or not an object). */
const mlc_json *mlc_json_get(const mlc_json *obj, const char *key);
/* 1 and *|out| when |v| is a number that is an integer in int64 range. */
int mlc_json_int(const mlc_json *v, int64_t *out);
/* The string of |v| when it is a string, else NULL. */
const char *mlc_json_str(const mlc_json *v);

/* Appends |v| as JSON.  Strings are escaped so that the output is valid
** UTF-8 JSON whatever bytes they hold (a byte that is not part of valid
** UTF-8 is written as \u00XX).  At the top level, the key |skip| (NULL:
** none) of an object is left out. */
void mlc_json_write(mlc_strbuf *b, const mlc_json *v, const char *skip);
/* Appends |s| (|n| bytes) as a JSON string literal, escaped as above. */
void mlc_json_write_str(mlc_strbuf *b, const char *s, size_t n);

#endif /* MLC_DRIVER_JSON_H */
