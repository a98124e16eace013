/*
** rtblob.S: the runtime archive (PIC objects of libmlcrt) and the headers a
** model description is compiled against, embedded in the compiler so that
** `mlc-onnx compile` needs nothing beside itself and a C compiler.
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
BLOB(mlc_drv_rt_abi_h, MLC_RT_ABI_H)
BLOB(mlc_drv_rt_model_h, MLC_RT_MODEL_H)

  .section .note.GNU-stack, "", @progbits
