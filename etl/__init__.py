"""The ETL: LiteLLM's spend logs (PostgreSQL) -> the Parquet store. The store's only writer."""
