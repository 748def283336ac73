// The kernel headers a fused module (compile()'s elementwise fusion, fusion.cpp) is compiled from
// by NVRTC, embedded as NUL-terminated text: the per-op math is the eager kernels' own source.
    .section .rodata
#define CK_EMBED(symbol, path) \
    .global symbol; .type symbol, @object; .balign 8; symbol: .incbin path; .byte 0; .size symbol, . - symbol
CK_EMBED(core_cuda_src_args, CORE_CUDA_SRC_ARGS)
CK_EMBED(core_cuda_src_op_codes, CORE_CUDA_SRC_OP_CODES)
CK_EMBED(core_cuda_src_common, CORE_CUDA_SRC_COMMON)
CK_EMBED(core_cuda_src_elementwise, CORE_CUDA_SRC_ELEMENTWISE)
CK_EMBED(core_cuda_src_expressions, CORE_CUDA_SRC_EXPRESSIONS)
    .section .note.GNU-stack,"",@progbits
