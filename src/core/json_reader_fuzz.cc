// Fuzzes the JSON reader: each input line is one document, read into types of every root kind
// that use every conversion (decimals, binary, dates, timestamps, arrays of structs, maps), with
// and without from_json's struct of nulls for malformed rows, strictly and with from_json's
// lenient defaults (single quotes, bare non-numeric values: the rewriting of a row that is not
// JSON), with numbers of more than 15 digits marked (json_exact_numbers.h) where a decimal is in
// the type. Nothing may crash, and every column must be well-formed with one row per line.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/json_reader.h"

namespace {

constexpr std::string_view kTypes[] = {
    "struct<i:bigint,d:decimal(10,3),b:binary,t:timestamp,n:timestamp_ntz,day:date,f:float,s:string,"
    "a:array<struct<x:int,y:array<tinyint>>>,m:map<string,map<string,double>>>",
    "array<struct<i:int,s:string>>",
    "map<string,array<boolean>>",
    "array<decimal(38,0)>",
};

std::vector<std::unique_ptr<sluice::JsonReader>> MakeReaders() {
  std::vector<std::unique_ptr<sluice::JsonReader>> readers;
  for (std::string_view text : kTypes) {
    for (bool null_fields : {false, true}) {
      sluice::JsonReadOptions options;
      options.malformed_as_null_fields = null_fields;
      // from_json reads leniently (every option on, so that each rewriting is tried), with the
      // struct of nulls.
      if (null_fields) options.leniency = {true, true, true, true, true, true, true};
      readers.push_back(sluice::JsonReader::Make(*sluice::ParseTypeString(text), options).value());
    }
  }
  return readers;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<std::unique_ptr<sluice::JsonReader>> readers = MakeReaders();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  sluice::BinaryBuilder rows(sluice::DataType::String());
  while (true) {
    size_t newline = input.find('\n');
    rows.Append(input.substr(0, newline));
    if (newline == std::string_view::npos) break;
    input.remove_prefix(newline + 1);
  }
  sluice::ColumnPtr documents = rows.Finish();
  for (const auto& reader : readers) {
    sluice::DecodeStats stats;
    sluice::Result<sluice::ColumnPtr> read = reader->Read(*documents, &stats);
    if (!read.ok() || (*read)->length != documents->length || !(*read)->Validate().ok()) std::abort();
    if (stats.malformed > documents->length) std::abort();
  }
  return 0;
}
