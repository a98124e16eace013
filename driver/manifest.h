/*
** manifest.h: reading back the manifest of a compiled model (the JSON
** object compile embeds in model.so) with jansson, and writing JSON that is
** valid UTF-8 whatever bytes it is given.
**
** The manifest is text from a file that anyone may have written, so
** inspect never copies it into its own output as it is: it parses it here
** (jansson: RFC 8259, no duplicate keys, no NUL, valid UTF-8; then at most
** MLC_MANIFEST_MAX_DEPTH levels of nesting, checked on the parsed tree) and
** shows it only as JSON written again (mlc_manifest_write).  Anything else
** is an error value that says at which byte the text went wrong (the
** offset jansson reports: the bytes it had read) and why:
**
**   {"a": [1, 2}        ->  invalid JSON at byte 12: ']' expected near '}'
**   {"a": "x<0x01>"}    ->  invalid JSON at byte 8: control character 0x1 near '"x'
**   {"a": "x<newline>"} ->  invalid JSON at byte 8: control character 0xa near '"x'
**   {"a": [[[ ... 65 levels deep
**                       ->  invalid JSON at byte 69: at most 64 levels of nesting
**                           (the offset of the first bracket too deep)
**
** Error messages hold only printable ASCII: a byte of the manifest that
** jansson quotes ("near '...'") is shown as \xNN when it is not.
*/
#ifndef MLC_DRIVER_MANIFEST_H
#define MLC_DRIVER_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "base/status.h"
#include "base/strbuf.h"

#define MLC_MANIFEST_MAX_DEPTH 64

/* Parses |len| bytes of |text|: one JSON object.  *|out| transferred
** (json_decref).  Errors: MLC_INVALID_ARGUMENT "invalid JSON at byte N:
** what is wrong" (also for a root that is not an object, or nesting deeper
** than MLC_MANIFEST_MAX_DEPTH); MLC_RESOURCE_EXHAUSTED when out of memory.
** *|out| is NULL on error. */
MLC_MUST_USE mlc_status mlc_manifest_parse(const char *text, size_t len, json_t **out);

/* Appends |v| (a value from mlc_manifest_parse) as JSON on one line, with
** ", " and ": " between items; strings are valid UTF-8 (jansson checked
** them when parsing) and escaped again.  At the top level, the key |skip|
** (NULL: none) of an object is left out.  Out of memory sets |b|->oom. */
void mlc_manifest_write(mlc_strbuf *b, const json_t *v, const char *skip);

/* Appends |n| bytes of |s| (NULL: "") as a JSON string literal that is
** valid UTF-8 whatever the bytes: '"', '\\' and control bytes escaped, a
** byte that is not part of valid UTF-8 written as \u00XX. */
void mlc_json_write_bytes(mlc_strbuf *b, const char *s, size_t n);

#endif /* MLC_DRIVER_MANIFEST_H */
