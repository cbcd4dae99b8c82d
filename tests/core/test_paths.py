"""The user cache directory: override, XDG base directory, home fallback."""

from __future__ import annotations

from pathlib import Path

from fxscope.core.paths import user_cache_dir


def test_override_wins(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FXSCOPE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "c"


def test_follows_xdg_cache_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FXSCOPE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "fxscope"


def test_defaults_to_dot_cache_in_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FXSCOPE_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / ".cache" / "fxscope"
