// make.mjs writes a Hive-partitioned data set with DuckDB: an identifier
// column (id, distinct, named like one), a string column (color), numeric
// features, a numeric partition key (part) and a text one (region). It
// also writes DuckDB's own reading of the data set, in the order ingest
// reads it (files sorted by path, rows in file order), as expected.csv.
// Run it through make.sh, which installs DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync } from 'node:fs';

const inst = await DuckDBInstance.create(':memory:');
const db = await inst.connect();
const sql = async (q) => (await db.runAndReadAll(q)).getRowObjectsJson();

rmSync('data', { recursive: true, force: true });
await sql(`CREATE TABLE t AS SELECT
    i::INTEGER                                      AS id,
    ((i * 7919) % 1000) / 100.0                     AS x1,
    ((i * 31) % 17)::INTEGER                        AS x2,
    ['red', 'green', 'blue'][1 + i % 3]             AS color,
    (i % 3)::INTEGER                                AS part,
    CASE WHEN i % 2 = 0 THEN 'north' ELSE 'south' END AS region,
    round(sin(((i * 7919) % 1000) / 100.0) + ((i * 31) % 17) / 10.0 + (i % 3), 6)::DOUBLE AS y
  FROM range(1200) r(i) ORDER BY i`);
await sql(`COPY t TO 'data' (FORMAT parquet, PARTITION_BY (part, region))`);
await sql(`COPY (
    SELECT id, x1, x2, color, y, part, region
    FROM read_parquet('data/**/*.parquet', hive_partitioning = true, filename = true, file_row_number = true)
    ORDER BY filename, file_row_number
  ) TO 'expected.csv' (HEADER, DELIMITER ',')`);
