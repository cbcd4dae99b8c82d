"""Analysis of a trace's slices: per-name statistics, call trees (top-down, bottom-up, butterfly), folded
stacks, the comparison of two traces and the notes kept beside a trace. Qt-free; the window and the
``fxscope stats``/``stacks``/``diff`` commands call the same functions."""
