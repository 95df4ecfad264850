"""What needs both sides of the store: the commands cron runs (`python -m etl ...`: a run,
then the budget metrics read back through the query layer; doctor; rollups). Above both
`etl/` (the only writer) and `queries/` (the readers)."""
