"""Why a frame is not symbolized, in words a developer can act on.

"??" in a backtrace has a handful of causes: no debug file for the module's build ID anywhere we looked
(which directories, the cache, which debuginfod servers and what they answered), a debug file whose symbols
cover no function at that address, a function without line information, or an address outside every
module's mappings. The crash view shows the sentence for the selected frame and per module.
"""

from __future__ import annotations

from pathlib import Path


def searched_places(resolver) -> list[str]:
    """Where a :class:`fxscope.core.symbolize.resolver.SymbolFileResolver` looks for a build ID, as short phrases."""
    places: list[str] = []
    store = getattr(resolver, "_store", None)
    dirs = [str(d) for d in getattr(resolver, "_debug_dirs", [])]
    if store is not None:
        dirs += [str(d) for d in store.directories if str(d) not in dirs]
    if dirs:
        places.append("debug directories " + ", ".join(dirs))
    if store is not None:
        places.append(f"the symbol cache {Path(store.cache_dir)}")
    return places


def explain_missing_module(resolver, name: str, build_id: bytes) -> str:
    """The sentence for a module without any symbols."""
    places = searched_places(resolver)
    store = getattr(resolver, "_store", None)
    urls = list(getattr(store, "debuginfod_urls", []) or [])
    if urls:
        answers = list(dict.fromkeys((store.misses.get(build_id) if store is not None else None) or []))
        places.append("debuginfod " + ", ".join(urls) + (f" ({'; '.join(answers)})" if answers else ""))
    else:
        places.append("no debuginfod server (set one in Preferences or $DEBUGINFOD_URLS)")
    return f"no debug file for {name} build ID {build_id.hex()}; searched: " + "; ".join(places)


def explain_frame(name: str, relative: int, has_symbols: bool, missing: str, function: str = "",
                  has_line: bool = False) -> str:
    """The sentence for one backtrace frame (empty when it is fully symbolized)."""
    if not name:
        return "the address is in no module's {{{mmap}}} range of this report: nothing to look it up in"
    if not has_symbols:
        return missing or f"no symbols for {name}"
    if not function:
        return f"{name} has symbols, but no function covers {name}+0x{relative:x}"
    if not has_line:
        return f"{function} has no line information at {name}+0x{relative:x} (no DWARF line table for it)"
    return ""
