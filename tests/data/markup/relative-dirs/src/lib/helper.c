#include "helper.h"

__attribute__((noinline)) int helper(int x) {
    return inlined_step(x) + 3;
}
