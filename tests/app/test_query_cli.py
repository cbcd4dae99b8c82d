"""``fxscope query`` and ``fxscope export --format parquet``: one trace, many traces (local processes and a
loopback Dask cluster), Parquet exports as traces, and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from fxscope.app.cli import main
from fxscope.core.sql.batch import expand_traces, run_dask, run_local
from fxscope.core.synthetic_trace import generate_trace

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "demo.fxt"
COUNT = "SELECT count(*) AS n, sum(dur) AS total FROM slice"


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, testdata) -> Path:
    """Four generated traces, the third-party ones, and one file that is not a trace."""
    d = tmp_path_factory.mktemp("fleet")
    for seed in range(4):
        (d / f"gen{seed}.fxt").write_bytes(generate_trace(3_000 + 500 * seed, seed=seed))
    for f in (testdata / "fxt").glob("*.fxt"):
        shutil.copy(f, d / f.name)
    (d / "broken.fxt").write_bytes(b"this is not a trace")
    return d


def test_query_one_trace_in_every_format(capsys, tmp_path) -> None:
    code, out, err = _cli(capsys, "query", str(DEMO), COUNT, "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    code, out, _ = _cli(capsys, "query", str(DEMO), COUNT, "--format", "csv")
    assert list(csv.DictReader(io.StringIO(out))) == [{"n": str(row["n"]), "total": str(row["total"])}]
    code, out, _ = _cli(capsys, "query", str(DEMO), COUNT)
    assert out.split("\n")[0].split() == ["n", "total"] and str(row["n"]) in out
    sql_file = tmp_path / "q.sql"
    sql_file.write_text(COUNT + ";\n")
    code, _, _ = _cli(capsys, "query", str(DEMO), "-f", str(sql_file), "--format", "parquet", "-o", str(tmp_path / "r.parquet"))
    assert code == 0
    assert pq.read_table(tmp_path / "r.parquet").to_pylist() == [row]
    assert not [p for p in os.listdir(tmp_path) if "fxscope-tmp" in p]


@pytest.mark.parametrize(("args", "needle"), [
    ((str(DEMO), "SELEC count(*) FROM slice"), "syntax error"),
    ((str(DEMO), "SELECT * FROM no_such_table"), "no_such_table"),
    (("/no/such/trace.fxt", COUNT), "/no/such/trace.fxt"),
    ((str(Path(__file__)), COUNT), "not a trace"),
    ((str(DEMO), "-f", "/no/such/query.sql"), "/no/such/query.sql"),
])  # fmt: skip
def test_bad_sql_or_trace_is_one_line_exit_2(capsys, args, needle) -> None:
    code, out, err = _cli(capsys, "query", *args)
    assert code == 2
    assert err.startswith("fxscope: error:") and needle in err and err.count("\n") == 1
    assert "Traceback" not in err and out == ""


def test_compressed_trace_is_queried_as_the_plain_one(capsys, tmp_path) -> None:
    import gzip

    packed = tmp_path / "demo.fxt.gz"
    packed.write_bytes(gzip.compress(DEMO.read_bytes()))
    _, plain, _ = _cli(capsys, "query", str(DEMO), COUNT, "--format", "json")
    code, out, err = _cli(capsys, "query", str(packed), COUNT, "--format", "json")
    assert code == 0, err
    assert json.loads(out) == json.loads(plain)
    result = run_local([str(packed)], COUNT, workers=1)
    assert result.failures.num_rows == 0 and result.rows.column("n")[0].as_py() == json.loads(plain)[0]["n"]


def test_export_parquet_every_table_readable_by_duckdb(capsys, tmp_path) -> None:
    out_dir = tmp_path / "demo"
    code, _, err = _cli(capsys, "export", str(DEMO), "--format", "parquet", "-o", str(out_dir))
    assert code == 0, err
    names = sorted(p.name for p in out_dir.iterdir())
    assert "slice.parquet" in names and "args.parquet" in names and "thread_state.parquet" in names
    assert not [n for n in names if "fxscope-tmp" in n]
    # a plain DuckDB (no fxscope) reads the export; and the export is a trace for fxscope query
    con = duckdb.connect()
    direct = con.sql(f"SELECT count(*), sum(dur) FROM read_parquet('{out_dir / 'slice.parquet'}')").fetchall()[0]
    _, out_trace, _ = _cli(capsys, "query", str(DEMO), COUNT, "--format", "json")
    _, out_export, _ = _cli(capsys, "query", str(out_dir), COUNT, "--format", "json")
    assert json.loads(out_trace) == json.loads(out_export)
    assert [direct[0], direct[1]] == [json.loads(out_trace)[0]["n"], json.loads(out_trace)[0]["total"]]
    by_name = "SELECT name, count(*) AS c FROM slice GROUP BY name ORDER BY name"
    _, a, _ = _cli(capsys, "query", str(DEMO), by_name, "--format", "csv")
    _, b, _ = _cli(capsys, "query", str(out_dir), by_name, "--format", "csv")
    assert a == b and a.count("\n") > 3


def test_many_traces_locally_with_failures_as_rows(capsys, fleet, tmp_path) -> None:
    paths = expand_traces(str(fleet / "*.fxt"))
    serial = run_local(paths, COUNT, workers=1)
    parallel = run_local(paths, COUNT, workers=2)
    assert parallel.rows.to_pylist() == serial.rows.to_pylist()
    assert serial.failures.to_pylist() == parallel.failures.to_pylist()
    assert [r["trace"] for r in serial.failures.to_pylist()] == [str(fleet / "broken.fxt")]
    assert "not a trace" in serial.failures.column("error")[0].as_py()
    assert len(serial.rows) == len(paths) - 1
    # each trace's row is what a query of that trace alone gives
    for r in serial.rows.to_pylist()[:3]:
        _, out, _ = _cli(capsys, "query", r["trace"], COUNT, "--format", "json")
        assert json.loads(out) == [{"n": r["n"], "total": r["total"]}]
    out_file = tmp_path / "all.csv"
    code, _, err = _cli(capsys, "query", "--traces", str(fleet / "*.fxt"), COUNT, "--format", "csv", "-o", str(out_file))
    assert code == 0 and "1 of" in err
    assert len(list(csv.DictReader(out_file.open()))) == len(paths) - 1
    failures = list(csv.DictReader((tmp_path / "all.failures.csv").open()))
    assert [f["trace"] for f in failures] == [str(fleet / "broken.fxt")]


def test_many_parquet_exports(capsys, fleet, tmp_path) -> None:
    for seed in range(2):
        assert main(["export", str(fleet / f"gen{seed}.fxt"), "--format", "parquet", "-o", str(tmp_path / f"gen{seed}")]) == 0
    capsys.readouterr()
    from_exports = run_local(expand_traces(str(tmp_path / "gen*")), COUNT, workers=1).rows.to_pylist()
    from_fxt = run_local([str(fleet / "gen0.fxt"), str(fleet / "gen1.fxt")], COUNT, workers=1).rows.to_pylist()
    assert [(r["n"], r["total"]) for r in from_exports] == [(r["n"], r["total"]) for r in from_fxt]


@pytest.mark.slow
def test_many_traces_on_a_loopback_dask_cluster(capsys, fleet) -> None:
    from distributed import LocalCluster

    paths = expand_traces(str(fleet / "*.fxt"))
    local = run_local(paths, COUNT, workers=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:  # fmt: skip
        assert len(cluster.workers) == 2
        on_dask = run_dask(paths, COUNT, cluster.scheduler_address)
        code, out, err = _cli(capsys, "query", "--traces", str(fleet / "*.fxt"), COUNT, "--format", "json",
                              "--cluster", cluster.scheduler_address)  # fmt: skip
        assert len(cluster.workers) == 2  # (no worker died on the broken trace)
    assert sorted(on_dask.rows.to_pylist(), key=lambda r: r["trace"]) == local.rows.to_pylist()
    assert on_dask.failures.to_pylist() == local.failures.to_pylist()
    assert code == 0 and "broken.fxt" in err
    assert json.loads(out) == json.loads(json.dumps(local.rows.to_pylist(), default=int))


def test_unreachable_cluster_is_one_line_error(capsys, fleet) -> None:
    code, _, err = _cli(capsys, "query", "--traces", str(fleet / "*.fxt"), COUNT, "--cluster", "tcp://127.0.0.1:9")
    assert code == 2 and err.startswith("fxscope: error:") and err.count("\n") == 1


@pytest.mark.parametrize("name", ["richiesams_fxt-python_trace.fxt", "ocaml-trace_t2_first.fxt", "ocaml-trace_t2_second.fxt"])
def test_query_counts_equal_info_json(capsys, testdata, name: str) -> None:
    """The two commands a user compares: ``fxscope info --json`` and ``fxscope query`` on a third-party trace."""
    path = str(testdata / "fxt" / name)
    code, out, err = _cli(capsys, "info", path, "--json")
    assert code == 0, err
    info = json.loads(out)
    ev = info["events"]
    sql = ("SELECT (SELECT count(*) FROM instant) AS instant, (SELECT count(*) FROM counter) AS counter,"
           " (SELECT count(*) FROM log) AS log, (SELECT count(*) FROM provider) AS providers,"
           " (SELECT count(*) FROM warning) AS warnings, (SELECT count(*) FROM slice WHERE track_id IN (SELECT id FROM process_track)) AS spans,"
           " (SELECT count(DISTINCT utid) FROM (SELECT utid FROM thread_slice UNION ALL SELECT utid FROM instant)"
           " WHERE utid >= 0) AS threads_with_events")  # fmt: skip
    code, out, err = _cli(capsys, "query", path, sql, "--format", "json")
    assert code == 0, err
    (got,) = json.loads(out)
    assert got["instant"] == ev["instant"] and got["log"] == info["records"].get("log", 0)
    assert got["providers"] == len(info["providers"]) and got["warnings"] == len(info["warnings"])
    assert got["spans"] >= ev["async_begin"] and (got["counter"] > 0) == (ev["counter"] > 0)
    assert got["threads_with_events"] <= info["threads"]  # (info also counts counters', flows' threads)
