// The kernels' fatbin (built by nvcc from kernels/kernels.cu) embedded in the addon's read-only data.
    .section .rodata
    .global core_cuda_fatbin
    .type core_cuda_fatbin, @object
    .balign 64
core_cuda_fatbin:
    .incbin CORE_CUDA_FATBIN_PATH
    .byte 0
    .size core_cuda_fatbin, . - core_cuda_fatbin
    .section .note.GNU-stack,"",@progbits
