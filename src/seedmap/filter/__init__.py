"""Seeding and filtering: from reads to candidate verification windows."""
