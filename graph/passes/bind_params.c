/*
** bind_params.c: bind parameters whose values are known into constants
** (Relax's BindParams).
**
** The importer makes the model's weights (ONNX initializers) constants of
** the module, so by default there is nothing left to bind.  With the
** frontend's params_as_inputs, floating-point initializers (those a
** graph input overrides included) become parameters of main instead, each
** with its initializer as its known value (mlc_func_set_param_value).
** This pass then
**   - with the pipeline's params_as_inputs (compile --params-as-inputs):
**     keeps them as parameters, inputs of the compiled model's API, whose
**     known values become their defaults (mlc_func_set_param_default: the
**     model uses the weight it was compiled with unless the caller sets
**     the input; nothing is folded through them);
**   - without it: replaces every use of such a parameter by its value and
**     removes the parameter, so fold_constant and the passes after it see
**     constants, exactly as if the importer had made them constants.
** Parameters without a known value (the model's real inputs, and graph
** inputs whose default is an initializer) stay; a default is never bound.
**
**   before: def main(x, fc.weight): gv = R.matmul(x, fc.weight)
**           (fc.weight known: c0)
**   after:  def main(x): gv = R.matmul(x, c0)
*/
#include "graph/pass.h"

static mlc_status bind_func(mlc_module *m, mlc_func *f, int keep) {
  if (f->nparam_values == 0) return NULL;
  if (keep) {
    for (int i = 0; i < f->nparams; i++) {
      mlc_value *c = mlc_func_param_value(f, i);
      if (c) MLC_RETURN_IF_ERROR(mlc_func_set_param_default(f, i, c));
      MLC_RETURN_IF_ERROR(mlc_func_set_param_value(f, i, NULL));
    }
    return NULL;
  }
  mlc_subst sub;
  MLC_RETURN_IF_ERROR(mlc_subst_init(&sub, m));
  for (int i = f->nparams - 1; i >= 0; i--) {
    mlc_value *c = mlc_func_param_value(f, i);
    if (!c) continue;
    mlc_subst_set(&sub, f->params[i], c);
    mlc_func_remove_param(f, i);
  }
  mlc_status s = mlc_subst_apply_keep_names(&sub, f);
  mlc_subst_fini(&sub);
  return s;
}

/* The pass: rewrites |m| in place; |ctx| is borrowed (its options say
** whether weights stay inputs). */
mlc_status mlc_pass_bind_params(mlc_module *m, const mlc_pass_ctx *ctx) {
  int keep = ctx && ctx->opt && ctx->opt->params_as_inputs;
  for (int i = 0; i < m->nfuncs; i++) MLC_RETURN_IF_ERROR(bind_func(m, m->funcs[i], keep));
  return NULL;
}
