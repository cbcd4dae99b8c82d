static inline __attribute__((always_inline)) int inlined_step(int x) { return x * 7 + 1; }
int helper(int x);
