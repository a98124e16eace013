/*
** rtblob.S: the runtime archive (PIC objects of libmlcrt), embedded in the
** compiler so that `mlc-onnx compile` needs nothing beside itself and a C
** compiler (which only links).
*/
#define BLOB(name, file)        \
  .section .rodata.name, "a";   \
  .balign 64;                   \
  .globl name;                  \
  .hidden name;                 \
name:                           \
  .incbin file;                 \
  .globl name##_end;            \
  .hidden name##_end;           \
name##_end:                     \
  .byte 0

BLOB(mlc_drv_rt_archive, MLC_RT_ARCHIVE)

/* The providers' run-time wrappers (extern/rt_*.c), where configured. */
#ifdef MLC_EXT_OPENBLAS_ARCHIVE
BLOB(mlc_drv_ext_openblas, MLC_EXT_OPENBLAS_ARCHIVE)
#endif
#ifdef MLC_EXT_ONEDNN_ARCHIVE
BLOB(mlc_drv_ext_onednn, MLC_EXT_ONEDNN_ARCHIVE)
#endif
#ifdef MLC_EXT_CUBLAS_ARCHIVE
BLOB(mlc_drv_ext_cublas, MLC_EXT_CUBLAS_ARCHIVE)
#endif
#ifdef MLC_EXT_CUBLASLT_ARCHIVE
BLOB(mlc_drv_ext_cublaslt, MLC_EXT_CUBLASLT_ARCHIVE)
#endif
#ifdef MLC_EXT_CUDNN_ARCHIVE
BLOB(mlc_drv_ext_cudnn, MLC_EXT_CUDNN_ARCHIVE)
#endif

  .section .note.GNU-stack, "", @progbits
