"""The string table is interned into from several threads after the read (a search's argument index in a
worker, the UI's details on the main thread): every id must name the text it was returned for, even when a
thread switch comes in the middle of an intern (as it can in a free-threaded build, or anywhere a switch
falls between taking the next id and appending)."""

from __future__ import annotations

import threading
import time

from fxscope.formats.fxt.tables import ProviderTables


class _SwitchingList(list):
    """A string list whose append lets the other threads run first: the interleaving that gives two new
    texts the same id when taking the id and appending are not one step."""

    def append(self, text: str) -> None:
        time.sleep(0)
        super().append(text)


def test_interning_from_several_threads_gives_each_text_its_own_id() -> None:
    tables = ProviderTables()
    tables.strings = _SwitchingList(tables.strings)
    texts = [[f"thread{t}-text{i}" for i in range(300)] for t in range(4)]
    ids: list[list[int]] = [[] for _ in texts]
    start = threading.Barrier(len(texts))

    def intern_all(t: int) -> None:
        start.wait()
        ids[t] = [tables.intern(text) for text in texts[t]]
        ids[t] += [tables.intern(text) for text in texts[(t + 1) % len(texts)][:100]]  # shared texts too

    threads = [threading.Thread(target=intern_all, args=(t,)) for t in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for t, mine in enumerate(ids):
        assert [tables.strings[i] for i in mine] == texts[t] + texts[(t + 1) % len(texts)][:100]
    assert len(tables.strings) == 1 + sum(len(x) for x in texts)  # each text once
