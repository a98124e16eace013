/*
** ext_conv_ref.h: a conv2d call as the providers' wrappers take it
** (extern/rt_util.h: mlc_ext_conv) and its double-precision reference, for
** the tests of those wrappers (test_ext_kernels.c, test_ext_cuda.c).
*/
#ifndef MLC_TESTS_EXT_CONV_REF_H
#define MLC_TESTS_EXT_CONV_REF_H

#include <stdint.h>

typedef struct conv_p {
  int64_t n, c, h, w, k, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, g;
  int bias, res, act; /* act: 0 none, 1 relu, 2 clip(lo, hi) */
  float lo, hi;
  int res_in_y; /* the residual is Y's memory (test_ext_cuda.c) */
} conv_p;

/* The output's height and width. */
static inline void conv_out_hw(const conv_p *p, int64_t *oh, int64_t *ow) {
  *oh = (p->h + p->pt + p->pb - ((p->kh - 1) * p->dh + 1)) / p->sh + 1;
  *ow = (p->w + p->pl + p->pr - ((p->kw - 1) * p->dw + 1)) / p->sw + 1;
}

/* |want| = act(conv(x, w) + bias + residual), computed in double. */
static inline void conv_ref(const conv_p *p, const float *x, const float *w, const float *b, const float *r,
                            float *want) {
  int64_t oh, ow;
  conv_out_hw(p, &oh, &ow);
  int64_t cg = p->c / p->g, kg = p->k / p->g;
  for (int64_t i = 0; i < p->n; i++)
    for (int64_t o = 0; o < p->k; o++)
      for (int64_t yy = 0; yy < oh; yy++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double s = p->bias ? b[o] : 0;
          int64_t g = o / kg;
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t u = 0; u < p->kh; u++)
              for (int64_t v = 0; v < p->kw; v++) {
                int64_t iy = yy * p->sh - p->pt + u * p->dh, ix = xx * p->sw - p->pl + v * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                s += (double)x[((i * p->c + g * cg + ci) * p->h + iy) * p->w + ix] *
                     w[((o * cg + ci) * p->kh + u) * p->kw + v];
              }
          int64_t at = ((i * p->k + o) * oh + yy) * ow + xx;
          if (p->res) s += r[at];
          if (p->act == 1) s = s > 0 ? s : 0;
          if (p->act == 2) s = s < p->lo ? p->lo : s > p->hi ? p->hi : s;
          want[at] = (float)s;
        }
}

#endif /* MLC_TESTS_EXT_CONV_REF_H */
