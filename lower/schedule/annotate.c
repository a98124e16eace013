/*
** annotate.c: sch.annotate(block_or_loop=l, ann_key="pragma_unroll_explicit",
** ann_val=4) attaches a key and a value (an integer, a float, a string, or
** a sampled integer handle, stored as its value) to a loop or a block,
** replacing the value of a key it already has; sch.unannotate(
** block_or_loop=l, ann_key=...) removes one.  Annotations are hints for
** lowering and codegen (which ignore keys they do not know): they never
** change what the function computes, so any loop or block may carry them.
**
** Printed as TVMScript does: `for i in T.serial(16, annotations={"k": 4}):`
** and `T.block_attr({"k": 4})` in a block.  Handles are unchanged.
**
** Refused: a handle that is neither a loop nor a block (HANDLE), an empty
** key or a value of another type (ARGUMENT), unannotate of a key the
** statement does not have (ARGUMENT).
*/
#include <string.h>

#include "lower/schedule/sched_int.h"

static mlc_status target(mlc_sch *s, const mlc_sch_inst *in, mlc_tir_stmt **out) {
  const mlc_sch_arg *a = sch_arg(in, "block_or_loop");
  if (!a) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "missing argument block_or_loop");
  if (a->kind == MLC_SCH_ARG_RV && mlc_sch_rv_kind_of(s, a->rv) == MLC_SCH_RV_BLOCK)
    return sch_item_block(s, a, "block_or_loop", out);
  if (a->kind == MLC_SCH_ARG_RV && mlc_sch_rv_kind_of(s, a->rv) != MLC_SCH_RV_LOOP)
    return sch_fail(s, MLC_SCH_ERR_HANDLE, "block_or_loop: handle %d is neither a block nor a loop", a->rv);
  return sch_item_loop(s, a, "block_or_loop", out);
}

static mlc_status key_of(mlc_sch *s, const mlc_sch_inst *in, const char **key) {
  MLC_RETURN_IF_ERROR(sch_arg_str(s, in, "ann_key", key));
  if (!(*key)[0]) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "ann_key is empty");
  return NULL;
}

mlc_status mlc_sch_apply_annotate(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *st;
  const char *key;
  MLC_RETURN_IF_ERROR(target(s, in, &st));
  MLC_RETURN_IF_ERROR(key_of(s, in, &key));
  const mlc_sch_arg *v = sch_arg(in, "ann_val");
  if (!v) return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "missing argument ann_val");
  mlc_tir_attr a = {key, MLC_TIR_ATTR_INT, NULL, 0, 0};
  switch (v->kind) {
    case MLC_SCH_ARG_INT: a.i = v->i; break;
    case MLC_SCH_ARG_FLOAT:
      a.kind = MLC_TIR_ATTR_FLOAT;
      a.f = v->f;
      break;
    case MLC_SCH_ARG_STR:
      a.kind = MLC_TIR_ATTR_STR;
      a.s = v->s ? v->s : "";
      break;
    case MLC_SCH_ARG_RV: MLC_RETURN_IF_ERROR(sch_item_int(s, v, "ann_val", &a.i)); break;
    case MLC_SCH_ARG_NONE:
    case MLC_SCH_ARG_LIST:
      return sch_fail(s, MLC_SCH_ERR_ARGUMENT,
                      "ann_val of \"%s\" on %s must be an integer, a float, a string or a sampled integer", key,
                      sch_desc(s, st));
  }
  return mlc_tir_stmt_set_annot(s->m, st, &a) ? NULL : mlc_oom();
}

mlc_status mlc_sch_apply_unannotate(mlc_sch *s, mlc_sch_inst *in) {
  mlc_tir_stmt *st;
  const char *key;
  MLC_RETURN_IF_ERROR(target(s, in, &st));
  MLC_RETURN_IF_ERROR(key_of(s, in, &key));
  if (!mlc_tir_stmt_annot(st, key))
    return sch_fail(s, MLC_SCH_ERR_ARGUMENT, "%s has no annotation \"%s\"", sch_desc(s, st), key);
  return mlc_tir_stmt_remove_annot(s->m, st, key) < 0 ? mlc_oom() : NULL;
}

mlc_status mlc_sch_annotate(mlc_sch *s, mlc_sch_rv block_or_loop, const char *key, mlc_sch_arg value) {
  mlc_sch_arg a[3] = {MLC_SCH_RV_ARG(block_or_loop), MLC_SCH_STR_ARG(key ? key : ""), value};
  a[0].key = "block_or_loop";
  a[1].key = "ann_key";
  a[2].key = "ann_val";
  return mlc_sch_apply(s, MLC_SCH_INST_ANNOTATE, 3, a, NULL, NULL);
}

mlc_status mlc_sch_unannotate(mlc_sch *s, mlc_sch_rv block_or_loop, const char *key) {
  mlc_sch_arg a[2] = {MLC_SCH_RV_ARG(block_or_loop), MLC_SCH_STR_ARG(key ? key : "")};
  a[0].key = "block_or_loop";
  a[1].key = "ann_key";
  return mlc_sch_apply(s, MLC_SCH_INST_UNANNOTATE, 2, a, NULL, NULL);
}
