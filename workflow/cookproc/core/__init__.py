"""The core every stage shares, torch-free: typed Parquet I/O with integrity checks (schemas,
integrity), errors, script logging and progress (logs), config validation (config_schema) and the
code fingerprints that decide reruns (fingerprint, deps)."""
