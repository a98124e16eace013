/* rt_onednn.c: (being written) */
typedef int mlc_extern_rt_onednn_unit;
