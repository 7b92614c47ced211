// Runs SQL statements in one in-memory DuckDB session and prints, for each, its wall-clock time
// (the engine's start-up excluded): `seconds=S sql=...` per line. Reads every result completely.
//
// Usage: node duckdb_timed.mjs "SET threads=1" "COPY (...) TO 'f.parquet' (FORMAT parquet)"
import { DuckDBInstance } from '@duckdb/node-api';

const statements = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
for (const sql of statements) {
  const start = process.hrtime.bigint();
  await connection.runAndReadAll(sql);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(`seconds=${seconds.toFixed(3)} sql=${sql.replace(/\s+/g, ' ').slice(0, 80)}\n`);
}
connection.closeSync();
