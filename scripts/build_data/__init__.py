"""Per-source readers used by scripts/build_default_data.py (offline, deterministic)."""
