// make.mjs writes the interop fixtures with DuckDB and Polars, writers this
// project did not write, and the expected values as DuckDB's own CSV dump.
// Run it through make.sh, which installs the two packages.
import { DuckDBInstance } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROWS = 4200; // DuckDB row groups hold a multiple of 2048 rows: 3 groups
const TEXT_ROWS = 1000; // the text fixtures hold the first rows only, to stay small

const inst = await DuckDBInstance.create(':memory:');
const db = await inst.connect();
const sql = async (q) => (await db.runAndReadAll(q)).getRowObjectsJson();

// One table, every value a pure function of the row number i (0-based).
await sql(`CREATE TABLE t AS SELECT
    i::INTEGER                                        AS id,       -- int32, delta-packed in v2
    ((i * 7919) % 10007 - 5000)::BIGINT               AS i64,      -- int64, not monotone
    (((i * 37) % 1000) / 8.0)::FLOAT                  AS f32,      -- float32
    (i / 10.0 + sin(i::DOUBLE))::DOUBLE               AS f64,      -- float64, full mantissas
    (i % 3 = 0)                                       AS flag,     -- bool
    CASE WHEN i % 17 = 5 THEN NULL
         ELSE ((i % 100) / 4.0)::DOUBLE END           AS nullable, -- NULL at rows 6, 23, 40, … (1-based)
    (i % 5)::DOUBLE * 1.5                             AS lowcard,  -- 5 values: dictionary-encoded
    (i % 7)::SMALLINT                                 AS i16,      -- int16
    CASE i % 4 WHEN 0 THEN 'plain' WHEN 1 THEN 'a, b'
         WHEN 2 THEN 'a "q"' ELSE 'two
lines' END                                            AS label     -- string, needs quoting in CSV
  FROM range(${ROWS}) r(i) ORDER BY i`);

const pq = (file, opts) => sql(`COPY t TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048, ${opts})`);
await pq('duckdb_v2_zstd.parquet', 'PARQUET_VERSION V2, COMPRESSION zstd');
await pq('duckdb_v1_snappy.parquet', 'COMPRESSION snappy');
await pq('duckdb_v1_gzip.parquet', 'COMPRESSION gzip');
await pq('duckdb_v1_uncompressed.parquet', 'COMPRESSION uncompressed');
await sql(`COPY (FROM t WHERE id < ${TEXT_ROWS}) TO 'duckdb.csv' (HEADER, DELIMITER ',')`);
await sql(`COPY (FROM t WHERE id < ${TEXT_ROWS}) TO 'duckdb.tsv.gz' (HEADER, DELIMITER '\t', COMPRESSION gzip)`);
// The expected values: DuckDB's own text of every value (shortest text
// that reads back to the same float), NULL as empty.
await sql(`COPY (SELECT * EXCLUDE (label) FROM t) TO 'expected.csv.gz' (HEADER, DELIMITER ',', COMPRESSION gzip)`);

// Polars writes the same table from an in-memory frame (via DuckDB's CSV,
// so the values are DuckDB's). Polars and DuckDB differ in page layout,
// statistics and encodings.
const tmp = mkdtempSync(join(tmpdir(), 'interop-'));
await sql(`COPY (SELECT * EXCLUDE (label) FROM t) TO '${tmp}/t.parquet' (FORMAT parquet)`);
const df = pl.readParquet(`${tmp}/t.parquet`);
df.writeParquet('polars_zstd.parquet', { compression: 'zstd' });
rmSync(tmp, { recursive: true });

// The encodings and codecs each fixture really holds, for the record.
const meta = {};
for (const f of ['duckdb_v2_zstd', 'duckdb_v1_snappy', 'duckdb_v1_gzip', 'duckdb_v1_uncompressed', 'polars_zstd']) {
  const rows = await sql(`SELECT path_in_schema AS col, list(DISTINCT compression) AS codecs,
      list(DISTINCT encodings) AS encodings, count(*) AS row_groups
    FROM parquet_metadata('${f}.parquet') GROUP BY ALL ORDER BY min(column_id)`);
  const created = await sql(`SELECT created_by FROM parquet_file_metadata('${f}.parquet')`);
  meta[`${f}.parquet`] = { created_by: created[0].created_by, columns: rows };
}
meta.versions = { duckdb: (await sql('SELECT version() AS v'))[0].v };
writeFileSync('fixtures.json', JSON.stringify(meta, null, 1) + '\n');
