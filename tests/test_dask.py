"""`seedmap map --dask`: batches mapped by the workers of a Dask cluster (a LocalCluster of 2 worker
processes here), written by the client in read order. The output is byte for byte a local `-t 1` run's,
single and paired, SAM and BAM, every engine; a worker killed in the middle of a run changes nothing; bad
input stops the run with one error line and no output file."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from distributed import Client, LocalCluster, WorkerPlugin  # the test extra installs dask[distributed]
from helpers import COMP, decode, mutate, random_genome

from seedmap.cli import main
from seedmap.index.fm import FmParams
from seedmap.index.kmer import KmerParams
from seedmap.index.neighborhood import NeighborhoodParams
from seedmap.kinds import build_index
from seedmap.pipeline import EngineOptions, RunOptions, dask_run
from seedmap.pipeline.run import run_map

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow  # every test starts a dask LocalCluster or a run on one


def fastq(records: list[tuple[str, np.ndarray]]) -> str:
    return "".join(f"@{name}\n{decode(seq)}\n+\n{'I' * seq.size}\n" for name, seq in records)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A 30 kbp genome with a repeat, indexed three ways; 2,000 reads and 600 pairs of 100 bp with up to 6
    edits (a tenth from nowhere); a FASTQ whose 1,500th record is broken."""
    rng = np.random.default_rng(11)
    d = tmp_path_factory.mktemp("dask")
    g = random_genome(rng, 30_000)
    g[12_000:12_400] = g[5_000:5_400]
    (d / "ref.fa").write_text(">chr1\n" + decode(g[:20_000]) + "\n>chr2\n" + decode(g[20_000:]) + "\n")
    reads = []
    for i in range(2000):
        p = int(rng.integers(0, g.size - 100))
        r = g[p:p + 100] if rng.random() < 0.9 else random_genome(rng, 100)
        r = mutate(rng, r, int(rng.integers(0, 7)))
        reads.append((f"read{i}", COMP[r[::-1]] if rng.random() < 0.5 else r))
    (d / "reads.fq").write_text(fastq(reads))
    r1, r2 = [], []
    for i in range(600):
        f = int(rng.normal(300, 30))
        p = int(rng.integers(0, g.size - f))
        frag = g[p:p + f] if rng.random() < 0.5 else COMP[g[p:p + f][::-1]]
        r1.append((f"pair{i}/1", mutate(rng, frag[:100], int(rng.integers(0, 6)))))
        r2.append((f"pair{i}/2", mutate(rng, COMP[frag[-100:][::-1]], int(rng.integers(0, 8)))))
    (d / "r1.fq").write_text(fastq(r1))
    (d / "r2.fq").write_text(fastq(r2))
    (d / "inter.fq").write_text(fastq([x for ab in zip(r1, r2, strict=True) for x in ab]))
    text = fastq(reads).splitlines(keepends=True)
    text[4 * 1500 + 3] = "II\n"  # quality shorter than the sequence
    (d / "bad.fq").write_text("".join(text))
    build_index(str(d / "ref.fa"), None, "neighborhood", NeighborhoodParams(10, 16))
    build_index(str(d / "ref.fa"), None, "kmer", KmerParams(12))
    build_index(str(d / "ref.fa"), None, "fm", FmParams(8))
    return d


@pytest.fixture(scope="module")
def cluster() -> str:
    """One LocalCluster of 2 worker processes for the module (it takes seconds to start)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      memory_limit=0) as c:
        yield c.scheduler_address


def _run(d: Path, out: Path, dask: str | None = None, paired: str = "", batch: int = 200, kind: str = "neighborhood",
         **engine) -> bytes:
    reads = {"": ("reads.fq", None, False), "two": ("r1.fq", "r2.fq", False), "inter": ("inter.fq", None, True)}
    r1, r2, inter = reads[paired]
    run_map(RunOptions(reference=str(d / "ref.fa"), reads=str(d / r1), reads2=str(d / r2) if r2 else None,
                       interleaved=inter, output=str(out), threads=1, batch_size=batch, command_line="seedmap test",
                       dask=dask, engine=EngineOptions(kind=kind, **engine)))
    return out.read_bytes()


@pytest.mark.parametrize("kind, fmt", [("neighborhood", "sam"), ("neighborhood", "bam"), ("kmer", "sam"),
                                       ("fm", "bam")])
def test_single_end_same_as_local(data, cluster, tmp_path, kind, fmt):
    local = _run(data, tmp_path / f"local.{fmt}", kind=kind, batch=10_000)
    dask = _run(data, tmp_path / f"dask.{fmt}", cluster, kind=kind)
    assert dask == local
    if fmt == "sam":
        names = [line.split(b"\t")[0] for line in local.splitlines() if not line.startswith(b"@")
                 and not int(line.split(b"\t")[1]) & 256]
        assert names == [f"read{i}".encode() for i in range(2000)]  # every read once, in input order


@pytest.mark.parametrize("paired, fmt", [("two", "sam"), ("inter", "bam")])
def test_paired_same_as_local(data, cluster, tmp_path, paired, fmt):
    """The insert size is estimated from the first pairs as locally, then every batch is mapped with it."""
    local = _run(data, tmp_path / f"local.{fmt}", paired=paired, batch=10_000)
    if paired == "inter":  # through a scheduler file, as `dask scheduler --scheduler-file` writes one
        (tmp_path / "scheduler.json").write_text(json.dumps({"type": "Scheduler", "address": cluster}))
        cluster = str(tmp_path / "scheduler.json")
    dask = _run(data, tmp_path / f"dask.{fmt}", cluster, paired=paired, batch=70)
    assert dask == local


def test_plan_warnings_once(data, cluster, tmp_path, caplog):
    """The workers' warnings reach the client's log, each once, as in a local run."""
    def warnings(dask: str | None) -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="seedmap"):
            _run(data, tmp_path / "w.sam", dask, windows=1)
        return sorted(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)

    local = warnings(None)
    assert local and all("NOT fully sensitive" in w or "substitutions" in w for w in local)
    assert warnings(cluster) == local


def test_index_shipped_to_workers_that_cannot_read_it(data, cluster, tmp_path, monkeypatch, caplog):
    """Workers that do not see the index at the client's path get its files once and map the same."""
    monkeypatch.setattr(dask_run, "sees_index", lambda path, index_id: False)  # runs on the workers
    local = _run(data, tmp_path / "local.sam", batch=10_000)
    with caplog.at_level(logging.INFO, logger="seedmap"):
        dask = _run(data, tmp_path / "dask.sam", cluster)
    assert "not at this path on 2 of 2 workers: sending it" in caplog.text
    assert dask == local


def _echo_batch(raw):
    from seedmap.pipeline.dask_worker import Done
    from seedmap.pipeline.stages import BatchStats

    return Done(np.frombuffer(raw.blocks[0], dtype=np.uint8), BatchStats(1, 0, 0, 0), {}, 0.0, 0.0)


def test_window_bounds_the_batches_in_flight(cluster):
    """Back-pressure: at most `window` batches are read and not yet written, whatever the input's size;
    the results come back in input order."""
    from seedmap.io.chunks import RawBatch

    read = []

    def items():
        for i in range(40):
            read.append(i)
            yield RawBatch(i, (f"batch {i}\n".encode(),), ("x.fq",))

    with Client(cluster) as client:
        flow = dask_run.Flow(client, 3, dask_run.Relay(False))
        tag = os.urandom(4).hex()
        out = []
        for done in flow.results(items(), lambda i, raw: client.submit(_echo_batch, raw, key=f"echo-{tag}-{i}"),
                                 lambda d: None):
            assert len(read) <= len(out) + 3
            out.append(done.data.tobytes())
    assert out == [f"batch {i}\n".encode() for i in range(40)] and flow.count == 40


class KillOnce(WorkerPlugin):
    """Ends the worker process (as a crash would) when it starts its `nth` batch, once per marker file."""

    def __init__(self, marker: str, nth: int) -> None:
        self.marker, self.nth, self.count = marker, nth, 0

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "executing" and str(key).startswith("seedmap-map-"):
            self.count += 1
            if self.count == self.nth and not os.path.exists(self.marker):
                Path(self.marker).touch()
                os._exit(1)


def test_worker_killed_mid_run(data, cluster, tmp_path):
    """Dask runs the lost worker's batches again: every read is written once, the output is unchanged."""
    local = _run(data, tmp_path / "local.bam", batch=10_000)
    marker = tmp_path / "killed"
    with Client(cluster) as client:
        client.register_plugin(KillOnce(str(marker), 4), name="kill-once")
        try:
            dask = _run(data, tmp_path / "dask.bam", cluster, batch=50)
        finally:
            client.unregister_worker_plugin("kill-once")
        assert marker.exists()  # a worker did die
        client.wait_for_workers(2, timeout=60)  # its nanny restarted it: the next tests have two again
    assert dask == local


def seedmap(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}, **(env or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          encoding="utf-8", errors="replace", timeout=300)


def test_cli_local_cluster(data, tmp_path):
    """`--dask local:2` starts its own cluster (workers of 2 threads each here): the same records as -t 1,
    nothing but seedmap's lines on stderr."""
    local = seedmap(data, "map", "-t", "1", "ref.fa", "r1.fq", "r2.fq", "-o", str(tmp_path / "local.sam"))
    dask = seedmap(data, "map", "--dask", "local:2", "-t", "2", "--batch-size", "100", "ref.fa", "r1.fq", "r2.fq",
                   "-o", str(tmp_path / "dask.sam"))
    assert local.returncode == dask.returncode == 0, local.stderr + dask.stderr
    assert [line for line in dask.stderr.splitlines() if not line.startswith("[seedmap] ")] == []
    assert "local cluster of 2 worker processes" in dask.stderr
    body = [(tmp_path / n).read_text().split("@PG", 1)[1].split("\n", 1)[1] for n in ("local.sam", "dask.sam")]
    assert body[0] == body[1] and body[0].count("\n") >= 1200


@pytest.mark.cudasim
def test_cli_gpu_workers_under_cuda_simulator(data, tmp_path):
    """--device passes through to the workers: the simulated GPU's output is the CPU's."""
    (tmp_path / "few.fq").write_text("".join((data / "reads.fq").read_text().splitlines(keepends=True)[:4 * 60]))
    args = ["map", "-q", str(data / "ref.fa"), str(tmp_path / "few.fq")]
    cpu = seedmap(tmp_path, *args, "-o", "cpu.sam")
    gpu = seedmap(tmp_path, *args, "--dask", "local:1", "--batch-size", "20", "--device", "cuda", "-o", "gpu.sam",
                  env={"NUMBA_ENABLE_CUDASIM": "1"})
    assert cpu.returncode == gpu.returncode == 0, cpu.stderr + gpu.stderr
    body = [(tmp_path / n).read_text().split("@PG", 1)[1].split("\n", 1)[1] for n in ("cpu.sam", "gpu.sam")]
    assert body[0] == body[1] and body[0].count("\n") >= 60


def test_cli_bad_input_stops_the_run(data, tmp_path):
    """A batch that fails on a worker ends the run: its error on one line, exit 1, no output file."""
    proc = seedmap(tmp_path, "map", "--dask", "local:2", "--batch-size", "100", str(data / "ref.fa"),
                   str(data / "bad.fq"), "-o", "out.bam")
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("[seedmap] ")]
    assert proc.returncode == 1
    assert len(errors) == 1 and errors[0].startswith("seedmap: error: ") and "bad.fq" in errors[0], proc.stderr
    assert os.listdir(tmp_path) == []


def test_errors_on_the_client(data, tmp_path, monkeypatch, capsys):
    """Without Dask installed, without an index, or without a scheduler: one line, no output."""
    out = str(tmp_path / "out.sam")
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    assert main(["map", "--dask", "local:2", str(data / "ref.fa"), str(data / "reads.fq"), "-o", out]) == 1
    assert capsys.readouterr().err.strip() == "seedmap: error: " + dask_run.INSTALL
    monkeypatch.undo()
    (tmp_path / "plain.fa").write_text(">x\nACGT\n")
    assert main(["map", "--dask", "local:2", str(tmp_path / "plain.fa"), str(data / "reads.fq"), "-o", out]) == 1
    assert "no neighborhood index; --dask workers map with a stored index" in capsys.readouterr().err
    monkeypatch.setattr(dask_run, "CONNECT_WAIT", 1.0)
    assert main(["map", "--dask", "tcp://127.0.0.1:9", str(data / "ref.fa"), str(data / "reads.fq"), "-o", out]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("seedmap: error: --dask tcp://127.0.0.1:9: cannot reach a Dask scheduler"), err
    assert main(["map", "--dask", "local:0", str(data / "ref.fa"), str(data / "reads.fq"), "-o", out]) == 1
    assert "give local:N" in capsys.readouterr().err
    assert not (tmp_path / "out.sam").exists()
