"""Device backends (backends/cuda): engines that find candidates, verify them and align the locations on
their device (engines.base.Engine), each index kind's made by its constructor in seedmap.kinds.KINDS."""
