"""The lab's settings: `usage.toml`, the environment and their defaults, read by the ETL,
the query layer and the pages alike; and the error a person can act on. The lowest layer:
imports nothing of this project."""
