"""Reading references and reads, writing SAM."""
