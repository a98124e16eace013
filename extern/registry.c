/* registry.c: (being written) */
typedef int mlc_extern_registry_unit;
