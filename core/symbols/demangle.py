"""Human-readable names for mangled C++ and Rust symbols, printed the way LLVM's demangler prints them.

``fxscope symbolize`` promises llvm-symbolizer's output, and LLVM's Itanium demangler has its own style
(``std::vector<int, std::allocator<int>>``, not the GNU ``std::allocator<int> >``), so the names go through
pycxxfilt, a maintained wrapper of LLVM's own demangle library (Itanium, Rust v0, MSVC). What LLVM does
around that library is reproduced here, in its two flavours:

- :func:`demangle` is ``LLVMSymbolizer::DemangleName`` (function and data names of symbolized addresses):
  ``nonMicrosoftDemangle`` (a leading ``.`` kept aside, ``_Z``/``___Z`` -> Itanium, which also covers
  Rust's legacy scheme, ``_R`` -> Rust v0). LLVM then demangles ``?`` names as MSVC without return type
  and calling convention, which pycxxfilt cannot leave out: such names (Windows binaries; fxscope reads
  ELF) are shown as written;
- :func:`demangle_any` is ``llvm::demangle`` (the ``{{{symbol:...}}}`` element): the same, then once more
  without one leading ``_`` (Mach-O style names), then MSVC for anything.

A name that does not demangle is shown as written, as LLVM does. D names (``_D...``), which LLVM also
demangles, are shown as written (no maintained wrapper of LLVM's D demangler). So is a name longer than
:data:`MAX_DEMANGLED_LENGTH`: LLVM's demangler recurses once per nesting level, and a hostile name (a symbol
table entry or a ``{{{symbol}}}`` element of 100,000 ``P``) overflows the stack and kills the process
(llvm-cxxfilt-19 crashes the same way); real names are far shorter.
"""

from __future__ import annotations

from functools import lru_cache

import pycxxfilt

#: longest name handed to the demangler: 16 KiB nests at most 16K levels, which LLVM's demangler parses in
#: well under 2 MB of stack (tested on a thread with a 2 MB stack; threads get 8 MB on Linux). The longest of
#: the 7,573 real names in tests/data/demangle is 583 characters.
MAX_DEMANGLED_LENGTH = 16 * 1024


def _call(fn, name: str) -> str | None:
    try:
        return fn(name)
    except ValueError:  # a malformed mangling (or an embedded NUL) is not an error for the user
        return None


def _non_microsoft(name: str) -> str | None:
    """LLVM's ``nonMicrosoftDemangle``: the demangled name, or None when ``name`` is not a valid mangling."""
    if len(name) > MAX_DEMANGLED_LENGTH:
        return None
    dot = ""
    if name.startswith("."):  # GCC's local-symbol prefix is not part of the mangled name
        dot, name = ".", name[1:]
    if name.startswith(("_Z", "___Z")):
        result = _call(pycxxfilt.itanium_demangle, name)
    elif name.startswith("_R"):
        result = _call(pycxxfilt.rust_demangle, name)
    else:
        return None
    return None if result is None else dot + result


@lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """A symbolized frame's or data object's name as llvm-symbolizer prints it (``DemangleName``)."""
    result = _non_microsoft(name)
    return name if result is None else result


@lru_cache(maxsize=4096)
def demangle_any(name: str) -> str:
    """A ``{{{symbol:NAME}}}`` element as llvm-symbolizer's markup filter prints it (``llvm::demangle``)."""
    result = _non_microsoft(name)
    if result is None and name.startswith("_"):
        result = _non_microsoft(name[1:])
    if result is None and len(name) <= MAX_DEMANGLED_LENGTH:
        result = _call(pycxxfilt.msvc_demangle, name)
    return name if result is None else result
