/*
** test_layout_kernels.c: the lowering rules of layout_transform,
** conv2d_nchwc and matmul_packed (lower/compute/layout.c), checked
** differentially through code generation with the one-op harness
** (tests/harness_kernel.h): matmul_packed against the plain loops below
** (in double), layout_transform against its evaluator (graph/eval_layout.c, itself
** checked against plain loops in test_layout), conv2d_nchwc against the
** plain convolution below (in double; float32 sums of up to 288 terms
** differ by rounding, hence rtol 1e-4), written over channel numbers (channel ch of a
** blocked tensor sits at [ch / block, ..., ch % block]).
*/
#include <stdint.h>
#include <string.h>

#include "graph/graph.h"
#include "tests/harness_kernel.h"
#include "tests/testutil.h"

/* y[n, o] = sum over input channels i (depthwise: i = o), kh, kw of
** x[n, i, oh*s - p + kh*d, ow*s - p + kw*d] * w[o, i, kh, kw] (+ bias[o]),
** every tensor read at its blocked position. */
static void ref_conv_nchwc(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                           void *out) {
  const mlc_type *x = &at[0], *w = &at[1];
  int64_t cb = x->dims[4], kb = w->dims[5], cin = x->dims[1] * cb, kout = ot->dims[1] * kb;
  int dw = mlc_th_attr_i(tc, "groups", 1) != 1;
  int64_t H = x->dims[2], W = x->dims[3];
  for (int64_t n = 0; n < ot->dims[0]; n++)
    for (int64_t o = 0; o < kout; o++)
      for (int64_t oh = 0; oh < ot->dims[2]; oh++)
        for (int64_t ow = 0; ow < ot->dims[3]; ow++) {
          double acc = tc->nargs > 2 ? mlc_th_ldd(in[2], at[2].dtype, o) : 0; /* [K/k, k] is channel order */
          for (int64_t i = dw ? o : 0; i < (dw ? o + 1 : cin); i++)
            for (int64_t kh = 0; kh < w->dims[2]; kh++)
              for (int64_t kw = 0; kw < w->dims[3]; kw++) {
                int64_t ih = oh * mlc_th_attr_at(tc, "strides", 0, 1) - mlc_th_attr_at(tc, "pads", 0, 0) +
                             kh * mlc_th_attr_at(tc, "dilations", 0, 1);
                int64_t iw = ow * mlc_th_attr_at(tc, "strides", 1, 1) - mlc_th_attr_at(tc, "pads", 1, 0) +
                             kw * mlc_th_attr_at(tc, "dilations", 1, 1);
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                int64_t xi[5] = {n, i / cb, ih, iw, i % cb};
                int64_t wi[6] = {o / kb, dw ? 0 : i / cb, kh, kw, dw ? 0 : i % cb, o % kb};
                acc += mlc_th_ldd(in[0], x->dtype, mlc_th_offset(x->dims, 5, xi)) *
                       mlc_th_ldd(in[1], w->dtype, mlc_th_offset(w->dims, 6, wi));
              }
          int64_t yi[5] = {n, o / kb, oh, ow, o % kb};
          mlc_th_st(out, ot->dtype, mlc_th_offset(ot->dims, 5, yi), acc);
        }
}

/* y[..., m, n] = sum over k of a[..., m, k] * wp[n / NB, k, n % NB] (+ bias[n]) */
static void ref_matmul_packed(const tcase *tc, const mlc_type *at, const void *const *in, const mlc_type *ot,
                              void *out) {
  const mlc_type *a = &at[0], *w = &at[1];
  int64_t K = w->dims[1], nb = w->dims[2], N = ot->dims[ot->rank - 1], rows = mlc_type_numel(ot) / (N ? N : 1);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t n = 0; n < N; n++) {
      double acc = tc->nargs > 2 ? mlc_th_ldd(in[2], at[2].dtype, n) : 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t wi[3] = {n / nb, k, n % nb};
        acc += mlc_th_ldd(in[0], a->dtype, r * K + k) * mlc_th_ldd(in[1], w->dtype, mlc_th_offset(w->dims, 3, wi));
      }
      mlc_th_st(out, ot->dtype, r * N + n, acc);
    }
}

static void t_layout_transform(void) {
  tcase a = {.name = "nchw_to_16c", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 4, {2, 32, 3, 5}}}, .attrs = {ASTR("src", "NCHW"), ASTR("dst", "NCHW16c")}};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "16c_to_nchw", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 5, {1, 2, 4, 3, 16}}}, .attrs = {ASTR("src", "NCHW16c"), ASTR("dst", "NCHW")}};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "16c_to_8c", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 5, {1, 3, 2, 3, 16}}}, .attrs = {ASTR("src", "NCHW16c"), ASTR("dst", "NCHW8c")}};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "8c_to_16c_batch", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 5, {N_, 4, 2, 2, 8}}}, .attrs = {ASTR("src", "NCHW8c"), ASTR("dst", "NCHW16c")},
             .nbatch = 2, .batch = {1, 3}};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "oihw_to_16i8o", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 4, {24, 32, 3, 3}}}, .attrs = {ASTR("src", "OIHW"), ASTR("dst", "OIHW16i8o")}};
  mlc_th_kernel_case(&e);
  tcase f = {.name = "nchw_to_3c_int", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{I32, 4, {1, 3, 4, 4}}}, .attrs = {ASTR("src", "NCHW"), ASTR("dst", "NCHW3c")}};
  mlc_th_kernel_case(&f);
}

static void t_conv2d_nchwc(void) {
  tcase a = {.name = "nchwc_bias_pad", .op = MLC_OP_CONV2D_NCHWC, .nargs = 3,
             .args = {{F32, 5, {1, 2, 7, 7, 16}}, {F32, 6, {2, 2, 3, 3, 16, 16}}, {F32, 2, {2, 16}}},
             .attrs = {AINTS("pads", 1, 1, 1, 1)}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "nchwc_first_conv_c3_stride2", .op = MLC_OP_CONV2D_NCHWC, .nargs = 2,
             .args = {{F32, 5, {2, 1, 9, 8, 3}}, {F32, 6, {1, 1, 3, 3, 3, 16}}},
             .attrs = {AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 0)}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "nchwc_8_to_16_dilated", .op = MLC_OP_CONV2D_NCHWC, .nargs = 2,
             .args = {{F32, 5, {1, 3, 9, 9, 8}}, {F32, 6, {1, 3, 3, 2, 8, 16}}},
             .attrs = {AINTS("dilations", 2, 1), AINTS("pads", 2, 0, 1, 1)}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "nchwc_depthwise", .op = MLC_OP_CONV2D_NCHWC, .nargs = 3,
             .args = {{F32, 5, {1, 2, 6, 6, 16}}, {F32, 6, {2, 1, 3, 3, 1, 16}}, {F32, 2, {2, 16}}},
             .attrs = {AINT("groups", 32), AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1)},
             .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&d);
  tcase e = {.name = "nchwc_pointwise_batch", .op = MLC_OP_CONV2D_NCHWC, .nargs = 2,
             .args = {{F32, 5, {N_, 2, 4, 4, 8}}, {F32, 6, {3, 2, 1, 1, 8, 8}}},
             .nbatch = 2, .batch = {1, 2}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&e);
  /* register tiles of several column chunks, rows of a prime width, the
  ** padded copy made per tile */
  tcase f = {.name = "nchwc_tiled_13x13", .op = MLC_OP_CONV2D_NCHWC, .nargs = 3,
             .args = {{F32, 5, {1, 3, 13, 13, 16}}, {F32, 6, {8, 3, 3, 3, 16, 16}}, {F32, 2, {8, 16}}},
             .attrs = {AINTS("pads", 1, 1, 1, 1)}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&f);
  tcase g = {.name = "nchwc_tiled_1x1_stride2", .op = MLC_OP_CONV2D_NCHWC, .nargs = 2,
             .args = {{F32, 5, {1, 4, 22, 22, 16}}, {F32, 6, {6, 4, 1, 1, 16, 16}}},
             .attrs = {AINTS("strides", 2, 2)}, .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&g);
  /* 13 columns and no padding or bias: the accumulator covers 14 columns
  ** (a 7 x 2 tile) over a copy of the input with one zero column */
  tcase h = {.name = "nchwc_wider_accumulator", .op = MLC_OP_CONV2D_NCHWC, .nargs = 2,
             .args = {{F32, 5, {1, 2, 13, 13, 16}}, {F32, 6, {8, 2, 1, 1, 16, 16}}},
             .ref = ref_conv_nchwc, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&h);
}

static void t_matmul_packed(void) {
  tcase a = {.name = "packed_64", .op = MLC_OP_MATMUL_PACKED, .nargs = 2,
             .args = {{F32, 2, {9, 48}}, {F32, 3, {2, 48, 64}}}, .ref = ref_matmul_packed, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&a);
  tcase b = {.name = "packed_32_batched_bias", .op = MLC_OP_MATMUL_PACKED, .nargs = 3,
             .args = {{F32, 3, {2, 7, 40}}, {F32, 3, {3, 40, 32}}, {F32, 1, {96}}}, .ref = ref_matmul_packed,
             .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&b);
  tcase c = {.name = "packed_16_symbolic_rows", .op = MLC_OP_MATMUL_PACKED, .nargs = 3,
             .args = {{F32, 2, {N_, 24}}, {F32, 3, {3, 24, 16}}, {F32, 1, {48}}}, .nbatch = 3, .batch = {1, 5, 23},
             .ref = ref_matmul_packed, .rtol = 1e-4, .atol = 1e-4};
  mlc_th_kernel_case(&c);
  tcase d = {.name = "kn_to_nk64n", .op = MLC_OP_LAYOUT_TRANSFORM, .nargs = 1,
             .args = {{F32, 2, {5, 128}}}, .attrs = {ASTR("src", "KN"), ASTR("dst", "NK64n")}};
  mlc_th_kernel_case(&d);
}

static void register_all(void) {
  static const CU_TestInfo tests[] = {{"layout_transform", t_layout_transform},
                                      {"conv2d_nchwc", t_conv2d_nchwc},
                                      {"matmul_packed", t_matmul_packed}, CU_TEST_INFO_NULL};
  CU_pSuite s = CU_add_suite("layout_kernels", mlc_th_kernel_init, mlc_th_kernel_clean);
  for (const CU_TestInfo *t = tests; s && t->pName; t++) CU_add_test(s, t->pName, t->pTestFunc);
}

int main(void) {
  static const mlc_test_register_fn fns[] = {register_all, NULL};
  return mlc_test_main("test_layout_kernels", fns);
}
