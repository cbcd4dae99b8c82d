"""Human-readable names for mangled C++ and Rust symbols, through maintained demanglers.

Itanium C++ (``_Z...``, which also covers Rust's legacy scheme) goes to the C++ runtime's
``__cxa_demangle`` via cxxfilt; Rust v0 (``_R...``) to rust-demangler. Anything that does not demangle is
shown as written, as llvm-symbolizer does.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    try:
        if name.startswith("_Z"):
            import cxxfilt

            return cxxfilt.demangle(name)
        if name.startswith("_R"):
            import rust_demangler

            return rust_demangler.demangle(name)
    except Exception:  # an unknown or malformed mangling is not an error for the user: show it raw
        return name
    return name
