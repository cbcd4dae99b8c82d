"""The sdist and wheel carry the whole application: installed into a fresh venv, away from the source tree,
``fxscope`` reports its version, reads the bundled demo, symbolizes the bundled crash log and renders a screenshot.

The build runs without build isolation (setuptools and wheel come from the test extra), so it needs no network.
The fresh venv gets only the wheel; its dependencies (PySide6 alone is ~200 MB) are reached through a .pth file
naming this venv's site-packages. A .pth file there only adds the directory to sys.path, after the fresh
venv's own site-packages, and does not run the editable install's hooks, so fxscope itself can only come from
the wheel (checked below through the imported modules' paths).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

REPO_ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                 ".hypothesis", ".cache", "*.pyc", "*.so")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel (built from the sdist, as ``python -m build`` does) of a copy of the source tree."""
    work = tmp_path_factory.mktemp("build")
    shutil.copytree(REPO_ROOT, work / "src", ignore=IGNORED)
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"),
                    str(work / "src")], check=True, capture_output=True, timeout=300)
    return work / "dist"


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("fxscope-*.whl")  # (a platform wheel: it carries the compiled record loops)
    return wheel


def test_wheel_holds_every_resource_file(dist: Path) -> None:
    members = set(zipfile.ZipFile(_wheel(dist)).namelist())
    resources = {"fxscope/" + p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "resources").rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
    assert "fxscope/resources/demo/.build-id/3d/3a85572513e6cff897b8e9637d480eeb092027.debug" in resources
    assert resources - members == set()
    assert "fxscope/formats/symbfile/symbfile.proto" in members
    # every module of the four folders is in the wheel (a package left out of pyproject's list fails here)
    modules = {"fxscope/" + p.relative_to(REPO_ROOT).as_posix() for top in ("app", "core", "formats", "resources")
               for p in (REPO_ROOT / top).rglob("*.py")}
    assert modules - members == set()
    assert {"fxscope/__init__.py", "fxscope/__main__.py"} <= members
    # the FXT reader's compiled loops, built from formats/fxt/record_scan.c, and the model build's, from
    # core/trace/slice_kernels.c
    assert [m for m in members if m.startswith("fxscope/formats/fxt/record_scan.") and m.endswith(".so")]
    assert [m for m in members if m.startswith("fxscope/core/trace/slice_kernels.") and m.endswith(".so")]
    # the model's compiled span kernels, built from core/trace/span_kernels.c
    assert [m for m in members if m.startswith("fxscope/core/trace/span_kernels.") and m.endswith(".so")]
    # the sums and counts (core/trace/summary_kernels.c) and the scheduling replay (core/trace/sched_kernels.c)
    assert [m for m in members if m.startswith("fxscope/core/trace/summary_kernels.") and m.endswith(".so")]
    assert [m for m in members if m.startswith("fxscope/core/trace/sched_kernels.") and m.endswith(".so")]
    # the SIGBUS guard of the trace's memory map, built from formats/mapping_guard.c
    assert [m for m in members if m.startswith("fxscope/formats/mapping_guard.") and m.endswith(".so")]


def test_wheel_installs_one_top_level_package(dist: Path) -> None:
    """site-packages gets ``fxscope`` and its dist-info, nothing another distribution could clash with."""
    members = zipfile.ZipFile(_wheel(dist)).namelist()
    assert {m.split("/", 1)[0] for m in members} == {"fxscope", "fxscope-0.1.0.dist-info"}
    top_level = zipfile.ZipFile(_wheel(dist)).read("fxscope-0.1.0.dist-info/top_level.txt").decode().split()
    assert top_level == ["fxscope"]


def test_sdist_carries_packaging_and_tests(dist: Path) -> None:
    (sdist,) = dist.glob("fxscope-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for path in ("packaging/linux/install.sh", "packaging/linux/fxscope.xml", "packaging/fxscope.spec",
                 "packaging/build-bundle.sh", "resources/icons/fxscope.svg", "tests/conftest.py",
                 "formats/fxt/record_scan.c", "core/trace/slice_kernels.c", "core/trace/span_kernels.c",
                 "formats/mapping_guard.c", "core/trace/summary_kernels.c", "core/trace/sched_kernels.c"):
        assert path in names


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(_wheel(dist))], check=True, capture_output=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "zz-fxscope-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(QT_QPA_PLATFORM="offscreen", FXSCOPE_CACHE_DIR=str(cwd / "cache"))
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_installed_fxscope_runs_without_the_source_tree(venv: Path, tmp_path: Path) -> None:
    fxscope = str(venv / "bin" / "fxscope")
    where = _run(venv, str(venv / "bin" / "python"), "-c",
                 "from fxscope import app, core, formats, resources; "
                 "from fxscope.formats.fxt.compiled import record_scan; "
                 "from fxscope.core.trace.compiled import slice_kernels, span_kernels; "
                 "print(app.__file__, core.__file__, formats.__file__, resources.DEMO_TRACE, resources.DEMO_CRASH_LOG, "
                 "record_scan.__file__, slice_kernels.__file__, span_kernels.__file__)",
                 cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    paths = [Path(p) for p in where.stdout.split()]
    assert all(p.is_relative_to(venv) and p.exists() for p in paths), paths
    demo_trace, crash_log = paths[3], paths[4]  # (paths[5:]: the compiled record and model loops, from the wheel)

    version = _run(venv, fxscope, "--version", cwd=tmp_path)
    assert version.stdout.strip() == "fxscope 0.1.0", version.stderr

    info = _run(venv, fxscope, "info", str(demo_trace), cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    from fxscope.formats.fxt.reader import read_fxt
    from fxscope.resources import DEMO_TRACE

    assert f"records: {sum(read_fxt(DEMO_TRACE).record_counts.values())} " in info.stdout  # the same demo

    # the crash log's debug files ship with it; converted symbols go to the user cache directory
    symbolized = _run(venv, fxscope, "symbolize", "--debug-file-directory", str(crash_log.parent), str(crash_log),
                      cwd=tmp_path)
    assert symbolized.returncode == 0, symbolized.stderr
    assert "payload_weight /build/crashdemo/src/payload.h:24" in symbolized.stdout
    assert list((tmp_path / "cache").rglob("*.gsym"))

    shot = _run(venv, fxscope, "screenshot", "-o", "demo.png", "--size", "1200x800", cwd=tmp_path)
    assert shot.returncode == 0, shot.stderr
    image = QImage(str(tmp_path / "demo.png"))
    assert (image.width(), image.height()) == (1200, 800)
    colours = {image.pixel(x, y) for x in range(0, 1200, 7) for y in range(0, 800, 7)}
    assert len(colours) > 20, "the screenshot is blank"
