"""Devices: each backend implements the bulk verification of candidate windows."""
