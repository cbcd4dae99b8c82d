#!/bin/sh
# How pycrash and input.log were made (Debian 12, g++ 12.2, libpython3.11-dev 3.11.2-6+deb12u6, libc6 2.36-9+deb12u14).
set -e
g++ -O0 -g -fdebug-prefix-map="$PWD"=/build/pycrash -I/usr/include/python3.11 -o pycrash pycrash.cc guard.S \
    -L/usr/lib/x86_64-linux-gnu -lpython3.11
PYTHONHOME=/usr ./pycrash > input.log || true   # exits 139 from its SIGSEGV handler
