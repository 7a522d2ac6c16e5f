"""Device backends: the DeviceBackend interface the pipeline maps with (base.py), --device made into one
(select.py), and backends/cuda; each keys what it does with an index kind by the kind's name."""
