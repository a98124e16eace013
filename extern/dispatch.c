/* dispatch.c: (being written) */
typedef int mlc_extern_dispatch_unit;
