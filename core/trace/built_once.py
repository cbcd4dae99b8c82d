"""A value built once, by whichever thread asks first: the others wait for that build and share its result.

The timeline builds the model's search index in a background thread while a search typed meanwhile may ask
for it too. ``functools.cached_property`` does not lock from Python 3.12 (two callers would each build it:
seconds and tens of MB at 10M events), and before it took one lock for every instance of the class. A build that raises (a cancelled one) leaves the value unbuilt:
the next caller builds it. Qt-free: the model lives in core/.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class BuiltOnce(Generic[T]):
    """Holds the result of the first :meth:`get` whose build finished; concurrent :meth:`get` calls wait for
    the build in progress rather than starting their own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value: T | None = None
        self._built = False

    @property
    def built(self) -> bool:
        """True once a build finished: :meth:`get` then returns at once (a caller that must not wait, the
        UI thread, asks this first)."""
        return self._built

    def get(self, build: Callable[[], T]) -> T:
        """The value, built by ``build()`` unless a build already finished; waits for one in progress."""
        if not self._built:
            with self._lock:
                if not self._built:
                    self._value = build()
                    self._built = True
        return self._value  # type: ignore[return-value]


class once_property(Generic[T]):  # noqa: N801 (a decorator, named like functools.cached_property)
    """``functools.cached_property`` built once across threads: the first reader builds the value, readers in
    other threads meanwhile wait for that build (a :class:`BuiltOnce` per instance) instead of building their
    own. The window's background build makes the track tables while a search thread may ask for the same
    ones; a build that raises leaves the value unbuilt. Once built, the value sits in the instance's
    ``__dict__`` and later reads do not go through the descriptor."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        cell: BuiltOnce[T] = obj.__dict__.setdefault(f"_once_{self.name}", BuiltOnce())  # (atomic)
        value = cell.get(lambda: self.func(obj))
        obj.__dict__[self.name] = value
        return value
