-- time_zones: the time zones the display can use (DuckDB's, which does the bucketing)
SELECT name FROM pg_timezone_names() WHERE name LIKE '%/%' OR name = 'UTC' ORDER BY name
