"""What one `seedmap map` run is asked to do: its inputs and outputs, threads, device, and the options of each
stage (options.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from seedmap.io.read_group import ReadGroup
from seedmap.options import CPU_BATCH, CPU_PAIRS, GPU_READS, EngineOptions, MapOptions, PairOptions
from seedmap.paired.insert_size import InsertModel


@dataclass(frozen=True)
class RunOptions:
    """One `seedmap map` run."""

    reference: str
    reads: str
    reads2: str | None = None
    interleaved: bool = False
    output: str | None = None  # None or '-': SAM on stdout; *.bam: BAM
    index: str | None = None
    threads: int = 1
    batch_size: int | None = None  # reads (pairs for paired runs) per batch; None: the device's default
    device: str = "cpu"
    progress: bool = False  # a live count of the reads mapped (stderr is a terminal)
    progress_every: float = 0.0  # else a log line of the reads mapped every this many seconds (0: none)
    verbose: bool = False  # stage timings at the end
    dask: str | None = None  # map on the workers of this Dask scheduler address, or local:N (a LocalCluster)
    command_line: str = "seedmap map"
    read_group: ReadGroup | None = None
    secondary_seq: bool = False  # SEQ and QUAL on secondary records too (default '*', as bwa mem writes)
    insert: InsertModel | None = None  # given with -I, else estimated
    map: MapOptions = field(default_factory=MapOptions)
    engine: EngineOptions = field(default_factory=EngineOptions)
    pairs: PairOptions = field(default_factory=PairOptions)

    @property
    def paired(self) -> bool:
        return self.reads2 is not None or self.interleaved

    def with_batch_size(self, gpu_workers: int = 0) -> RunOptions:
        """These options with the batch size settled: the one given, else the CPU's, or, with `gpu_workers`
        per device, each worker's share of a device's reads in flight (never less than the CPU's)."""
        if self.batch_size is not None:
            return self
        cpu = CPU_PAIRS if self.paired else CPU_BATCH
        return replace(self, batch_size=max(cpu, GPU_READS // gpu_workers) if gpu_workers else cpu)
