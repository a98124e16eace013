/* rt_openblas.c: (being written) */
typedef int mlc_extern_rt_openblas_unit;
