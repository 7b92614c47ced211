// Runs SQL statements in an in-memory DuckDB and prints the rows of the last one as JSON lines,
// one JSON array per row (columns in order), in an exact canonical form that tests compare
// against byte for byte:
//   integers up to 32 bits      JSON numbers; 64 and 128 bits as strings ("123")
//   float, double               JSON numbers, shortest round-trip form (JavaScript's); NaN and
//                               infinities as the strings "NaN", "Infinity", "-Infinity"
//   decimal                     exact strings with `scale` fraction digits ("-0.50")
//   date                        "YYYY-MM-DD"
//   timestamp with time zone    "YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC; nanoseconds floored to micros)
//   timestamp without           the same without the Z
//   varchar / blob              JSON string / base64 string
//   list, array                 JSON arrays; struct: JSON objects in field order;
//   map                         arrays of {"key": k, "value": v}
//
// Usage: node duckdb_query.mjs "SET threads=1" "SELECT ..."   (exit code 1 and the error on stderr
// when a statement fails)
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';

const MICROS_PER_DAY = 86400000000n;

function pad(n, width) {
  return String(n).padStart(width, '0');
}

// Days since 1970-01-01 to a proleptic Gregorian civil date (Howard Hinnant's algorithm).
function civilFromDays(days) {
  let z = days + 719468n;
  const era = (z >= 0n ? z : z - 146096n) / 146097n;
  const doe = z - era * 146097n;
  const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
  let y = yoe + era * 400n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const d = doy - (153n * mp + 2n) / 5n + 1n;
  const m = mp < 10n ? mp + 3n : mp - 9n;
  if (m <= 2n) y += 1n;
  return `${y < 0n ? '-' : ''}${pad(y < 0n ? -y : y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}

function floorDiv(a, b) {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

function timestampFromMicros(micros, utc) {
  const days = floorDiv(micros, MICROS_PER_DAY);
  let rest = micros - days * MICROS_PER_DAY;
  const h = rest / 3600000000n;
  rest -= h * 3600000000n;
  const min = rest / 60000000n;
  rest -= min * 60000000n;
  const s = rest / 1000000n;
  const us = rest - s * 1000000n;
  return `${civilFromDays(days)}T${pad(h, 2)}:${pad(min, 2)}:${pad(s, 2)}.${pad(us, 6)}${utc ? 'Z' : ''}`;
}

function decimalString(value, scale) {
  const negative = value < 0n;
  let digits = (negative ? -value : value).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  }
  return (negative ? '-' : '') + digits;
}

function floatValue(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return v;
}

function canonical(value, type) {
  if (value === null || value === undefined) return null;
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return value;
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
      return value;
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return value.toString();
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return floatValue(value);
    case DuckDBTypeId.DECIMAL:
      return decimalString(value.value, value.scale);
    case DuckDBTypeId.DATE:
      return civilFromDays(BigInt(value.days));
    case DuckDBTypeId.TIMESTAMP:
      return timestampFromMicros(value.micros, false);
    case DuckDBTypeId.TIMESTAMP_TZ:
      return timestampFromMicros(value.micros, true);
    case DuckDBTypeId.TIMESTAMP_MS:
      return timestampFromMicros(value.millis * 1000n, false);
    case DuckDBTypeId.TIMESTAMP_S:
      return timestampFromMicros(value.seconds * 1000000n, false);
    case DuckDBTypeId.TIMESTAMP_NS:
      return timestampFromMicros(floorDiv(value.nanos, 1000n), false);
    case DuckDBTypeId.BLOB:
      return Buffer.from(value.bytes).toString('base64');
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return value.items.map((item) => canonical(item, type.valueType));
    case DuckDBTypeId.STRUCT: {
      const out = {};
      type.entryNames.forEach((name, i) => {
        out[name] = canonical(value.entries[name], type.entryTypes[i]);
      });
      return out;
    }
    case DuckDBTypeId.MAP:
      return value.entries.map((e) => ({ key: canonical(e.key, type.keyType), value: canonical(e.value, type.valueType) }));
    default:
      return value.toString();
  }
}

async function main() {
  const statements = process.argv.slice(2);
  if (statements.length === 0) {
    process.stderr.write('usage: node duckdb_query.mjs SQL [SQL...]\n');
    process.exit(2);
  }
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let reader;
  for (const sql of statements) reader = await connection.runAndReadAll(sql);
  const types = reader.columnTypes();
  const out = [];
  for (const row of reader.getRows()) {
    out.push(JSON.stringify(row.map((v, i) => canonical(v, types[i]))));
  }
  process.stdout.write(out.length ? `${out.join('\n')}\n` : '');
  connection.closeSync();
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
