"""packaging/linux: the desktop file, MIME types and AppStream metadata validate, agree with each other and with
the app, and install.sh lays them out under a prefix where the MIME database recognises traces by content."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fxscope.app.gui import DESKTOP_FILE
from fxscope.resources import DEMO_CRASH_LOG, DEMO_TRACE, ICON_SIZES, ICON_SVG, icon_png

REPO_ROOT = Path(__file__).resolve().parents[2]
LINUX = REPO_ROOT / "packaging" / "linux"
DESKTOP = LINUX / f"{DESKTOP_FILE}.desktop"
METAINFO = LINUX / f"{DESKTOP_FILE}.metainfo.xml"
MIME_XML = LINUX / "fxscope.xml"
INSTALL = LINUX / "install.sh"
FXT_MAGIC = bytes.fromhex("1000044678541600")
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install desktop-file-utils appstream shared-mime-info)")
    return path


def _desktop_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path)
    return dict(parser["Desktop Entry"])


def _mime_types() -> dict[str, ET.Element]:
    root = ET.parse(MIME_XML).getroot()
    return {m.get("type"): m for m in root.iter(f"{MIME_NS}mime-type")}


def test_desktop_file_validates() -> None:
    result = subprocess.run([_tool("desktop-file-validate"), str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr


def test_metainfo_validates() -> None:
    result = subprocess.run([_tool("appstreamcli"), "validate", "--no-net", "--pedantic", str(METAINFO)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not re.search(r"^[EW]: ", result.stdout, re.M), result.stdout  # infos only (tags newer than the tool)


def test_desktop_file_mime_types_and_metainfo_agree() -> None:
    entry = _desktop_entry(DESKTOP)
    assert entry["Exec"] == "fxscope %F"  # files as local paths, several at once: what app.cli passes to launch()
    assert entry["Icon"] == "fxscope"
    declared = set(_mime_types())
    listed = [t for t in entry["MimeType"].split(";") if t]
    assert set(listed) == declared == {"application/x-fuchsia-trace", "text/x-symbolizer-markup"}
    meta = ET.parse(METAINFO).getroot()
    assert meta.findtext("id") == DESKTOP_FILE
    assert meta.findtext("launchable") == DESKTOP.name
    assert {m.text for m in meta.iter("mediatype")} == declared
    release = meta.find("releases/release").get("version")
    pyproject_version = re.search(r'^version = "([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert release == pyproject_version, "add a <release> to the metainfo for the new version"


def test_fxt_magic_is_the_demo_traces_first_bytes() -> None:
    fxt = _mime_types()["application/x-fuchsia-trace"]
    assert [g.get("pattern") for g in fxt.iter(f"{MIME_NS}glob")] == ["*.fxt"]
    values = [m.get("value") for m in fxt.iter(f"{MIME_NS}match")]
    decoded = [bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-fA-F]{2})", v)) for v in values]
    assert decoded == [FXT_MAGIC, FXT_MAGIC[::-1]]  # little- and big-endian traces
    assert DEMO_TRACE.read_bytes()[:8] == FXT_MAGIC


def _install(prefix: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(INSTALL), str(prefix)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **env))


def test_install_sh_lays_out_the_tree(tmp_path: Path) -> None:
    result = _install(tmp_path / "pfx")
    assert result.returncode == 0, result.stderr
    share = tmp_path / "pfx" / "share"
    assert (share / "applications" / DESKTOP.name).read_bytes() == DESKTOP.read_bytes()
    assert (share / "mime" / "packages" / "fxscope.xml").read_bytes() == MIME_XML.read_bytes()
    assert (share / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    for size in ICON_SIZES:
        installed = share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "fxscope.png"
        assert installed.read_bytes() == icon_png(size).read_bytes()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / "fxscope.svg").read_bytes() == ICON_SVG.read_bytes()
    assert oct((share / "applications" / DESKTOP.name).stat().st_mode & 0o777) == "0o644"


def test_install_sh_can_point_the_launcher_at_the_bundle(tmp_path: Path) -> None:
    result = _install(tmp_path / "pfx", FXSCOPE_EXEC="/opt/fxscope/fxscope")
    assert result.returncode == 0, result.stderr
    installed = tmp_path / "pfx" / "share" / "applications" / DESKTOP.name
    entry = _desktop_entry(installed)
    assert (entry["Exec"], entry["TryExec"]) == ("/opt/fxscope/fxscope %F", "/opt/fxscope/fxscope")
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(installed)], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout
    bad = _install(tmp_path / "pfx2", FXSCOPE_EXEC="relative/fxscope")
    assert bad.returncode == 2 and "absolute" in bad.stderr


def test_installed_mime_database_recognises_traces_and_crash_logs_by_content(tmp_path: Path) -> None:
    _tool("update-mime-database")
    assert _install(tmp_path / "pfx").returncode == 0
    share = tmp_path / "pfx" / "share"
    # update-mime-database's compiled magic: section [priority:type], then >offset=<u16 length><bytes>
    magic = (share / "mime" / "magic").read_bytes()
    assert b"[80:application/x-fuchsia-trace]\n>0=\x00\x08" + FXT_MAGIC + b"\n" in magic
    assert b"[60:text/x-symbolizer-markup]\n" in magic
    # and a reader of that database (Qt's, from mime.cache) types files without a telling name by content
    shutil.copy(DEMO_TRACE, tmp_path / "trace-without-extension")
    shutil.copy(DEMO_CRASH_LOG, tmp_path / "crash-without-extension")
    (tmp_path / "notes").write_text("just {{ some }} text\n")
    probe = ("import sys; from PySide6.QtCore import QMimeDatabase; db = QMimeDatabase(); "
             "print(*(db.mimeTypeForFile(p).name() for p in sys.argv[1:]))")
    env = dict(os.environ, XDG_DATA_HOME=str(share), XDG_DATA_DIRS=f"{share}:/usr/share")
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "trace-without-extension"),
                             str(tmp_path / "crash-without-extension"), str(tmp_path / "notes")],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.stdout.split() == ["application/x-fuchsia-trace", "text/x-symbolizer-markup", "text/plain"], \
        result.stderr
