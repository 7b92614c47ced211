// `sluice parquet schema|meta|cat FILE`: looking inside Parquet files, like parquet-tools.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/row_printer.h"
#include "cli/warehouse.h"
#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/parquet/reader.h"
#include "sluice/storage/file_systems.h"

namespace sluice::cli {
namespace {

using parquet::ParquetReader;

struct ParquetOptions {
  std::string file;
  std::vector<std::string> columns;
  RowPrinting rows;
};

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// --- schema

// Prints schema elements [*index, ...) for `count` siblings, parquet-tools style.
void PrintElements(const std::vector<parquet::SchemaElement>& elements, size_t* index, int count, int depth,
                   std::string* out) {
  for (int i = 0; i < count && *index < elements.size(); ++i) {
    const parquet::SchemaElement& e = elements[(*index)++];
    const std::string indent(2 * depth, ' ');
    std::string line = indent + (e.repetition_type ? AsciiLower(parquet::RepetitionName(*e.repetition_type)) + " " : "");
    if (e.type) {
      line += AsciiLower(parquet::TypeName(*e.type));
      if (*e.type == parquet::Type::kFixedLenByteArray) line += "(" + std::to_string(e.type_length.value_or(0)) + ")";
    } else {
      line += "group";
    }
    line += " " + e.name;
    if (e.logical_type) {
      line += " (" + parquet::LogicalTypeToString(*e.logical_type) + ")";
    } else if (e.converted_type) {
      line += " (" + parquet::ConvertedTypeName(*e.converted_type) + ")";
    }
    if (e.num_children) {
      *out += line + " {\n";
      PrintElements(elements, index, *e.num_children, depth + 1, out);
      *out += indent + "}\n";
    } else {
      *out += line + ";\n";
    }
  }
}

Status RunSchema(const ParquetReader& reader) {
  const auto& elements = reader.metadata().schema;
  std::string out = "message " + (elements.empty() ? std::string("schema") : elements[0].name) + " {\n";
  size_t index = 1;
  PrintElements(elements, &index, elements.empty() ? 0 : elements[0].num_children.value_or(0), 1, &out);
  out += "}\n\nsluice schema:\n";
  for (const Field& field : reader.schema()->fields()) {
    out += "  " + field.name + ": " + field.type->ToString() + (field.nullable ? "" : " not null") + "\n";
  }
  Print(out);
  return Status::OK();
}

// --- meta

std::string JoinNames(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

Status RunMeta(const ParquetReader& reader) {
  const parquet::FileMetaData& meta = reader.metadata();
  std::ostringstream out;
  out << "rows: " << meta.num_rows << "\nrow groups: " << meta.row_groups.size() << "\nformat version: " << meta.version
      << "\ncreated by: " << meta.created_by.value_or("(unknown)") << "\n";
  if (!meta.key_value_metadata.empty()) {
    out << "key-value metadata:\n";
    for (const auto& kv : meta.key_value_metadata) {
      std::string value = kv.value.value_or("");
      if (value.size() > 200) value = value.substr(0, 200) + "... (" + std::to_string(value.size()) + " bytes)";
      out << "  " << kv.key << " = " << value << "\n";
    }
  }
  for (int g = 0; g < reader.num_row_groups(); ++g) {
    const parquet::RowGroup& group = meta.row_groups[g];
    out << "\nrow group " << g << ": " << group.num_rows << " rows, " << group.total_byte_size << " bytes uncompressed";
    if (group.total_compressed_size) out << ", " << *group.total_compressed_size << " bytes compressed";
    out << "\n";
    SLUICE_ASSIGN_OR_RETURN(std::vector<parquet::ColumnChunkStatistics> stats, reader.RowGroupStatistics(g));
    for (size_t c = 0; c < group.columns.size(); ++c) {
      const parquet::ColumnMetaData& chunk = *group.columns[c].meta_data;
      std::vector<std::string> encodings;
      for (auto e : chunk.encodings) encodings.push_back(parquet::EncodingName(e));
      out << "  " << JoinNames(chunk.path_in_schema, ".") << ": " << parquet::TypeName(chunk.type) << " "
          << parquet::CodecName(chunk.codec) << " [" << JoinNames(encodings, ", ") << "]\n"
          << "    values " << chunk.num_values << ", compressed " << chunk.total_compressed_size << " B, uncompressed "
          << chunk.total_uncompressed_size << " B, data page at " << chunk.data_page_offset;
      if (chunk.dictionary_page_offset) out << ", dictionary page at " << *chunk.dictionary_page_offset;
      out << "\n";
      const parquet::ColumnChunkStatistics& s = stats[c];
      if (s.null_count || s.min) {
        out << "    statistics:";
        if (s.null_count) out << " nulls " << *s.null_count;
        if (s.min) out << ", min " << FormatValue(*s.min, 0) << ", max " << FormatValue(*s.max, 0);
        out << "\n";
      }
    }
  }
  Print(out.str());
  return Status::OK();
}

// --- cat

Status RunCat(const ParquetReader& reader, const ParquetOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckRowPrinting(options.rows));
  parquet::ReadOptions read;
  read.columns = options.columns;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<parquet::BatchReader> batches, reader.NewBatchReader(read));
  return PrintRows(batches->schema(), [&] { return batches->Next(); }, options.rows);
}

void AddCommand(CLI::App* parent, const std::string& name, const std::string& description,
                const std::shared_ptr<ParquetOptions>& options,
                Status (*run)(const ParquetReader&, const ParquetOptions&), bool with_cat_options) {
  CLI::App* command = parent->add_subcommand(name, description);
  command->add_option("FILE", options->file, "Parquet file")->required();
  if (with_cat_options) {
    command->add_option("--columns", options->columns, "Columns to print: names or dot paths into structs")
        ->delimiter(',');
    AddRowPrintingOptions(command, &options->rows, "all");
  }
  command->callback([options, run, name] {
    Status status;
    auto reader = ParquetReader::Open(*storage::DefaultFileSystem(), AbsolutePath(options->file));
    status = reader.ok() ? run(**reader, *options) : reader.status();
    std::fflush(stdout);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice parquet %s: %s\n", name.c_str(), status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace

void RegisterParquetCommand(CLI::App& app) {
  auto options = std::make_shared<ParquetOptions>();
  CLI::App* parquet = app.add_subcommand("parquet", "Inspect Parquet files: schema, metadata, rows");
  parquet->require_subcommand(1);
  AddCommand(parquet, "schema", "Print the Parquet schema and the sluice schema it reads as", options,
             [](const ParquetReader& r, const ParquetOptions&) { return RunSchema(r); }, false);
  AddCommand(parquet, "meta",
             "Print the file metadata: row groups, column chunks, encodings, codecs, sizes, statistics", options,
             [](const ParquetReader& r, const ParquetOptions&) { return RunMeta(r); }, false);
  AddCommand(parquet, "cat", "Print rows as a table, JSON lines or CSV", options, RunCat, true);
}

}  // namespace sluice::cli
