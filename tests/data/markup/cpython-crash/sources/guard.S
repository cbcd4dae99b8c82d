/* call_with_guard(fn, arg): calls fn(arg) on an aligned stack. The body sits after the function's sized
 * symbol, as hand-written assembly often places its slow paths: the line table covers it (assembled with
 * -g), no symbol and no DWARF function does. */
    .text
    .p2align 4
    .globl call_with_guard
    .type call_with_guard, @function
call_with_guard:
    .cfi_startproc
    jmp .Lguarded
    .size call_with_guard, .-call_with_guard
.Lguarded:
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    and $-16, %rsp
    mov %rdi, %rax
    mov %rsi, %rdi
    call *%rax
    mov %rbp, %rsp
    pop %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .section .note.GNU-stack,"",@progbits
