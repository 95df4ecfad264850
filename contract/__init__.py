"""The store contract (docs/store.md): the store's layout and Arrow schemas, the measures
the rollups carry, how a rollup is summed from a day file, and the ETL's bookmark as
readers see it. The ETL writes what this describes; the query layer reads it. Imports
only `settings`: nothing of etl/, queries/ or the pages."""
