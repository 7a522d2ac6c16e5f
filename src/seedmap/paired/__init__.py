"""Paired-end reads: pairing mates, insert size, rescue, pair records (one batch of pairs through them:
seedmap.pipeline.pair_stages)."""
