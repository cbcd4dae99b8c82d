/* Two functions in two files, built with a relative compilation directory (-fdebug-prefix-map=$PWD=./build),
 * as distributions build (Debian's libc has DW_AT_comp_dir "./nptl"). */
#include "lib/helper.h"

__attribute__((noinline)) int twice(int x) { return helper(x) * 2; }

int main(int argc, char **argv) {
    (void)argv;
    return twice(argc);
}
