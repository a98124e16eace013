/*
** toy_blob.S: the toy model's description blob (TOY_BLOB, written by
** toy_blob_gen) in the section a model.so keeps it in, with the symbols
** the runtime reads it through (runtime/rt_blob.h).
*/
  .section .mlc_model, "a"
  .balign 8
  .globl mlc_model_blob
  .hidden mlc_model_blob
mlc_model_blob:
  .incbin TOY_BLOB
mlc_model_blob_end:

  .section .rodata.mlc_model_size, "a"
  .balign 8
  .globl mlc_model_blob_size
  .hidden mlc_model_blob_size
mlc_model_blob_size:
  .quad mlc_model_blob_end - mlc_model_blob

  .section .note.GNU-stack, "", @progbits
