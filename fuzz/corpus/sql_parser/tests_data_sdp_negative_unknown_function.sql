-- expect: 4:14 function 'initcap' does not exist in DuckDB
CREATE MATERIALIZED VIEW people AS SELECT 'ada lovelace' AS name;
CREATE MATERIALIZED VIEW pretty AS
SELECT name, initcap(name) AS title FROM people;
