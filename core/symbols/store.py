"""Find a module's symbols by build ID: local directories, ``ids.txt`` lists, debuginfod servers, a cache.

Layouts searched in each user directory (the ones other tools produce):

- ``DIR/.build-id/ab/cdef....debug`` (separate debug files) and ``DIR/.build-id/ab/cdef...`` (binaries);
- ``DIR/<build-id>`` / ``DIR/<build-id>.debug`` / ``DIR/<build-id>.gsym`` (flat directories named by ID);
- ``DIR/ids.txt``: lines ``<build-id> <path>`` (relative paths are relative to DIR), as Fuchsia writes;
- any other ELF or GSYM file directly in DIR, indexed by the build ID it carries (read once per file).

debuginfod servers (``DEBUGINFOD_URLS`` or explicit URLs) are asked ``GET /buildid/<id>/debuginfo``, then
``/executable``, with :mod:`fxscope.core.http_client`'s timeouts, retries (429/5xx, Retry-After), a deadline per
download and a size limit; answers are cached under the user cache directory. DWARF is converted to GSYM once per build
ID and the result cached too (with the DWARF's column numbers beside it, which GSYM cannot hold), so the second
lookup of a module costs a file open.

What a server did not have is remembered for the session (:class:`MissCache`, per server, build ID and kind):
symbolizing asks for a module once per frame, and without it every frame of a module no server has repeated
the same 404s (and a failing server's timeouts). A store's ``cancel`` flag (a closed crash view) stops its
lookups and cuts a download in progress.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fxscope.core.atomic_file import atomic_output
from fxscope.core.paths import user_cache_dir
from fxscope.formats.elf.reader import file_crc32, read_elf
from fxscope.formats.errors import FormatError

if TYPE_CHECKING:
    from fxscope.core.http_client import HttpLimits
    from fxscope.formats.dwarf.model import DwarfModel

MAX_DOWNLOAD = 4 << 30  # a debug file larger than 4 GiB is refused rather than filling the disk


def read_build_id(path: Path) -> bytes | None:
    """GNU build ID of an ELF file, or the UUID of a GSYM file; None for anything else."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(48)
    except OSError:
        return None
    if head[:4] in (b"MYSG", b"GSYM"):
        if len(head) < 48 or head[7] > 20 or head[7] == 0:
            return None
        return bytes(head[0x1C : 0x1C + head[7]])  # the header's UUID: bytes, whatever the byte order
    if head[:4] != b"\x7fELF":
        return None
    try:
        return read_elf(path).build_id or None
    except FormatError:
        return None


class MissCache:
    """What debuginfod servers answered when they had nothing for a build ID (a 404, or an error after the
    client's retries), per server, build ID and kind, for the life of the process: the same module is not
    asked for again in this session. Shared by the stores of every thread (they are made per report)."""

    #: entries kept at most (a fleet's worth of modules); past it the cache starts over
    LIMIT = 100_000

    def __init__(self) -> None:
        self._answers: dict[tuple[str, bytes, str], tuple[str, bool]] = {}
        self._lock = threading.Lock()

    def get(self, url: str, build_id: bytes, kind: str) -> tuple[str, bool] | None:
        """The answer remembered (as :attr:`SymbolStore.misses` words it) and whether it was an error (not a
        404), or None: ask the server."""
        with self._lock:
            return self._answers.get((url, build_id, kind))

    def remember(self, url: str, build_id: bytes, kind: str, answer: str, error: bool) -> None:
        with self._lock:
            if len(self._answers) >= self.LIMIT:
                self._answers.clear()
            self._answers[(url, build_id, kind)] = (answer, error)

    def clear(self) -> None:
        """Forget every miss (the servers' contents changed, or the settings did)."""
        with self._lock:
            self._answers.clear()


#: the session's misses, shared by every store that is given none of its own
SESSION_MISSES = MissCache()


class SymbolStore:
    def __init__(
        self,
        directories: Sequence[str | os.PathLike[str]] = (),
        debuginfod_urls: Sequence[str] | None = None,
        cache_dir: Path | None = None,
        timeout: float = 30.0,
        http_limits: HttpLimits | None = None,
        download_deadline: float = 600.0,
        max_download: int = MAX_DOWNLOAD,
        miss_cache: MissCache | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """``timeout`` is the longest silence from a debuginfod server (the read timeout); ``http_limits``
        overrides all of :class:`HttpLimits`. A download must finish within ``download_deadline`` seconds and
        ``max_download`` bytes, or it is dropped with a note in :attr:`errors`. ``miss_cache``: where misses
        are remembered (default: the session's); ``cancel``: once set, servers are asked nothing more."""
        self.directories = [Path(d) for d in directories]
        if debuginfod_urls is None:
            debuginfod_urls = os.environ.get("DEBUGINFOD_URLS", "").split()
        self.debuginfod_urls = [u.rstrip("/") for u in debuginfod_urls if u]
        self.cache_dir = cache_dir or user_cache_dir()
        self.timeout = timeout
        self._http_limits = http_limits
        self.download_deadline = download_deadline
        self.max_download = max_download
        self._index: dict[Path, dict[bytes, list[Path]]] = {}
        self.errors: list[str] = []
        #: per build ID, what each debuginfod server answered when it had nothing ("URL: 404")
        self.misses: dict[bytes, list[str]] = {}
        self.miss_cache = SESSION_MISSES if miss_cache is None else miss_cache
        self.cancel = cancel

    # ------------------------------------------------------------------ local
    def _dir_index(self, directory: Path) -> dict[bytes, list[Path]]:
        index = self._index.get(directory)
        if index is not None:
            return index
        index = {}
        ids = directory / "ids.txt"
        if ids.is_file():
            for line in ids.read_text(errors="replace").splitlines():
                parts = line.split(None, 1)
                if len(parts) == 2:
                    try:
                        key = bytes.fromhex(parts[0])
                    except ValueError:
                        continue
                    target = Path(parts[1].strip())
                    index.setdefault(key, []).append(target if target.is_absolute() else directory / target)
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            entries = []
        for entry in entries:
            if entry.is_file() and entry.name != "ids.txt":
                build_id = read_build_id(entry)
                if build_id:
                    index.setdefault(build_id, []).append(entry)
        self._index[directory] = index
        return index

    def _local(self, build_id: bytes, want_gsym: bool) -> Path | None:
        hex_id = build_id.hex()
        for directory in self.directories:
            if want_gsym:
                candidates = [directory / f"{hex_id}.gsym"]
            else:
                candidates = [
                    directory / ".build-id" / hex_id[:2] / f"{hex_id[2:]}.debug",
                    directory / ".build-id" / hex_id[:2] / hex_id[2:],
                    directory / f"{hex_id}.debug",
                    directory / hex_id,
                ]
            for candidate in candidates:
                if candidate.is_file():
                    return candidate
            for path in self._dir_index(directory).get(build_id, []):
                is_gsym = path.suffix == ".gsym"
                if path.is_file() and is_gsym == want_gsym:
                    return path
        return None

    # ------------------------------------------------------------------ debuginfod
    def _debuginfod(self, build_id: bytes) -> Path | None:
        """A download of an earlier run is used with or without servers configured now (it is a local file
        by then); a server is asked only when the cache has nothing."""
        hex_id = build_id.hex()
        cached_dir = self.cache_dir / "debuginfod" / hex_id
        for kind in ("debuginfo", "executable"):
            cached = cached_dir / kind
            if cached.is_file():
                return cached
        if not self.debuginfod_urls or self._cancelled():
            return None
        # the HTTP stack (requests, urllib3: ~100 ms to import) only when a server is asked: symbolizing
        # from local files starts without it
        from fxscope.core.http_client import Deadline, HttpClient, HttpError, HttpLimits

        client = HttpClient(self._http_limits or HttpLimits(read_timeout=self.timeout))
        for kind in ("debuginfo", "executable"):
            for url in self.debuginfod_urls:
                remembered = self.miss_cache.get(url, build_id, kind)
                if remembered is not None:  # asked before in this session: the same answer, no request
                    self._miss(build_id, url, kind, *remembered)
                    continue
                if self._cancelled():
                    return None
                target = cached_dir / kind
                deadline = Deadline(self.download_deadline, "debuginfod download deadline", self.cancel)
                try:
                    with client.exchange("GET", f"{url}/buildid/{hex_id}/{kind}", deadline,
                                         same_origin_only=False) as answer:
                        if answer.status == 404:
                            self._miss(build_id, url, kind, f"{url}: 404 ({kind})")
                            continue
                        if answer.status != 200:
                            head = client.read_body(answer, 200).decode("utf-8", "replace")
                            raise HttpError(client.redact(f"{answer.url}: HTTP {answer.status}: {head!r}"))
                        target.parent.mkdir(parents=True, exist_ok=True)
                        with atomic_output(target) as tmp, open(tmp, "wb") as fh:
                            client.copy_body(answer, fh, self.max_download)
                    return target
                except (HttpError, OSError) as exc:
                    if self._cancelled():  # not the server's answer: nothing to note or remember
                        return None
                    self._miss(build_id, url, kind, f"{url}: {exc}", error=True)
        return None

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _miss(self, build_id: bytes, url: str, kind: str, answer: str, error: bool = False) -> None:
        """Note what ``url`` answered (in :attr:`misses`, and :attr:`errors` for a failure) and remember it."""
        if error:
            self.errors.append(f"debuginfod {answer}")
        self.misses.setdefault(build_id, []).append(answer)
        self.miss_cache.remember(url, build_id, kind, answer, error)

    # ------------------------------------------------------------------ public
    def find_debug_file(self, elf: str | os.PathLike[str]) -> Path | None:
        """The separate debug file of a stripped binary: by build ID, then by ``.gnu_debuglink`` (with its
        CRC checked) next to the binary, in its ``.debug/`` directory and under ``/usr/lib/debug``."""
        info = read_elf(elf)
        if info.has_dwarf:
            return Path(elf)
        if info.build_id:
            found = self._local(info.build_id, want_gsym=False)
            if found is not None and Path(found).resolve() != Path(elf).resolve():
                return found
        if info.debuglink is None:
            return None
        name, crc = info.debuglink
        here = Path(elf).resolve().parent
        for candidate in (here / name, here / ".debug" / name, Path("/usr/lib/debug") / here.relative_to("/") / name,
                          *(d / name for d in self.directories)):
            if candidate.is_file() and candidate.resolve() != Path(elf).resolve() and file_crc32(candidate) == crc:
                return candidate
        return None

    def find_elf(self, build_id: bytes) -> Path | None:
        """A binary or debug file with this build ID (local first, then debuginfod)."""
        return self._local(build_id, want_gsym=False) or self._debuginfod(build_id)

    def find_gsym(self, build_id: bytes, convert: bool = True,
                  dwarf: Callable[[Path], DwarfModel | None] | None = None) -> Path | None:
        """A GSYM file for the build ID: a user's, the cache's, or one converted now from the ELF. ``dwarf``
        gives the DWARF model of the ELF to convert when the caller has it (or will need it too), so that it
        is decoded once."""
        found = self._local(build_id, want_gsym=True)
        if found:
            return found
        cached = self.cache_dir / "gsym" / f"{build_id.hex()}.gsym"
        if cached.is_file():
            return cached
        if not convert:
            return None
        elf = self.find_elf(build_id)
        if elf is None:
            return None
        from fxscope.core.symbols.gsym_convert import convert_elf_to_gsym

        cached.parent.mkdir(parents=True, exist_ok=True)
        model = dwarf(elf) if dwarf is not None else None
        convert_elf_to_gsym(elf, cached, model)
        if model is not None:  # GSYM has no columns: keep them beside it, so later runs need no DWARF
            from fxscope.core.symbols.column_cache import save_columns

            save_columns(self.columns_path(build_id), model, build_id)
        return cached

    def columns_path(self, build_id: bytes) -> Path:
        """Where the cache keeps the module's column numbers (:mod:`fxscope.core.symbols.column_cache`)."""
        return self.cache_dir / "gsym" / f"{build_id.hex()}.columns"
