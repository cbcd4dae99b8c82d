"""Demangling of real C++ and Rust symbol names."""

from __future__ import annotations

from core.symbols.demangle import demangle


def test_cpp() -> None:
    assert demangle("_ZN7Mangled4NameEv") == "Mangled::Name()"
    assert demangle("_ZNSt6vectorIiSaIiEE9push_backERKi") == "std::vector<int, std::allocator<int> >::push_back(int const&)"


def test_rust_legacy_and_v0() -> None:
    assert demangle("_ZN4core3fmt5write17h2f3d7e6a1a8b9c0dE") == "core::fmt::write::h2f3d7e6a1a8b9c0d"
    assert demangle("_RNvCs15kBYyAo9fc_7mycrate4main") == "mycrate::main"


def test_plain_and_broken_names_pass_through() -> None:
    assert demangle("main") == "main"
    assert demangle("_Zgarbage") == "_Zgarbage"
    assert demangle("_Rgarbage") == "_Rgarbage"
