// An independent reader of a Delta table's log, for checking what sluice writes: it replays
// `_delta_log` on its own (the checkpoint named by `_last_checkpoint`, read with DuckDB's
// read_parquet, then the JSON commits after it), reconciles add and remove actions by path, and
// prints one JSON document: {"version": N, "files": [absolute paths of the live data files]}.
// Deletion vectors are not supported (a file with one makes the script fail).
//
// Usage: node delta_replay.mjs /path/to/table
import { readFileSync, existsSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const table = process.argv[2];
const log = `${table}/_delta_log`;
const pad20 = (v) => String(v).padStart(20, '0');

const live = new Map();  // decoded relative path -> true
let version = -1;

function apply(action) {
  if (action.add) {
    if (action.add.deletionVector) throw new Error(`deletion vectors are not supported: ${action.add.path}`);
    live.set(decodeURIComponent(action.add.path), true);
  } else if (action.remove) {
    live.delete(decodeURIComponent(action.remove.path));
  }
}

if (existsSync(`${log}/_last_checkpoint`)) {
  const pointer = JSON.parse(readFileSync(`${log}/_last_checkpoint`, 'utf8'));
  if (pointer.parts && pointer.parts > 1) throw new Error('multi-part checkpoints are not supported here');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const file = `${log}/${pad20(pointer.version)}.checkpoint.parquet`;
  const reader = await connection.runAndReadAll(
    `SELECT "add".path, "add".deletionVector IS NOT NULL, "remove".path FROM read_parquet('${file}')`);
  for (const [addPath, hasDv, removePath] of reader.getRows()) {
    if (addPath !== null) apply({ add: { path: addPath, deletionVector: hasDv ? {} : null } });
    if (removePath !== null) apply({ remove: { path: removePath } });
  }
  version = Number(pointer.version);
}

for (let v = version + 1; existsSync(`${log}/${pad20(v)}.json`); v++) {
  for (const line of readFileSync(`${log}/${pad20(v)}.json`, 'utf8').split('\n')) {
    if (line.trim() !== '') apply(JSON.parse(line));
  }
  version = v;
}

const files = [...live.keys()].sort().map((path) => (path.startsWith('/') ? path : `${table}/${path}`));
process.stdout.write(JSON.stringify({ version, files }) + '\n');
