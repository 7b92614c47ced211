#include "parquet/projection.h"

#include <algorithm>
#include <map>
#include <memory>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

// A requested subtree: everything under the node, or some of a struct's fields.
struct Selection {
  bool all = false;
  std::map<int, Selection> fields;  // by field index, so pruned structs keep the file's order
};

Result<std::vector<std::string>> SplitPath(const std::string& path) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '`') {
      if (quoted && i + 1 < path.size() && path[i + 1] == '`') {
        parts.back() += '`';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == '.' && !quoted) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  if (quoted || std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    return Status::Error(errors::kUnresolvedColumn, "malformed column path '" + path + "'");
  }
  return parts;
}

Result<int> FindField(const std::vector<SchemaNode>& nodes, const std::string& name, const std::string& path) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  int found = -1;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (lower(nodes[i].name) != lower(name)) continue;
    if (found >= 0) return Status::Error(errors::kUnresolvedColumn, "column '" + path + "' is ambiguous: '" + name + "'");
    found = static_cast<int>(i);
  }
  if (found >= 0) return found;
  std::string names;
  for (const auto& node : nodes) names += (names.empty() ? "" : ", ") + node.name;
  return Status::Error(errors::kUnresolvedColumn,
                       "cannot resolve column '" + path + "': no field '" + name + "' among " + names);
}

void CollectLeaves(const SchemaNode& node, std::vector<int>* leaves) {
  if (node.leaf >= 0) leaves->push_back(node.leaf);
  for (const auto& child : node.children) CollectLeaves(child, leaves);
}

Result<SchemaNode> Prune(const SchemaNode& node, const Selection& selection) {
  if (selection.all) return node;
  SchemaNode pruned = node;
  pruned.children.clear();
  std::vector<Field> fields;
  for (const auto& [index, child_selection] : selection.fields) {
    SLUICE_ASSIGN_OR_RETURN(SchemaNode child, Prune(node.children[index], child_selection));
    Field field = node.type->field(index);
    field.type = child.type;
    fields.push_back(std::move(field));
    pruned.children.push_back(std::move(child));
  }
  SLUICE_ASSIGN_OR_RETURN(pruned.type, DataType::Struct(std::move(fields)));
  return pruned;
}

}  // namespace

Result<Projection> Project(const ParquetSchema& schema, const std::vector<std::string>& columns) {
  Projection projection;
  if (columns.empty()) {
    projection.type = schema.type;
    projection.nodes = schema.fields;
    for (size_t i = 0; i < schema.leaves.size(); ++i) projection.leaves.push_back(static_cast<int>(i));
    return projection;
  }
  std::vector<int> order;
  std::map<int, Selection> top;
  for (const std::string& column : columns) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> parts, SplitPath(column));
    SLUICE_ASSIGN_OR_RETURN(int index, FindField(schema.fields, parts[0], column));
    if (!top.count(index)) order.push_back(index);
    Selection* selection = &top[index];
    const SchemaNode* node = &schema.fields[index];
    for (size_t p = 1; p < parts.size() && !selection->all; ++p) {
      if (node->type->id() != TypeId::kStruct) {
        return Status::Error(errors::kUnresolvedColumn, "cannot resolve column '" + column + "': " + node->name +
                                                            " is " + node->type->ToString() + ", not a struct");
      }
      SLUICE_ASSIGN_OR_RETURN(int child, FindField(node->children, parts[p], column));
      selection = &selection->fields[child];
      node = &node->children[child];
    }
    // A whole subtree requested covers any part of it requested before or after.
    selection->all = true;
    selection->fields.clear();
  }
  std::vector<Field> fields;
  for (int index : order) {
    SLUICE_ASSIGN_OR_RETURN(SchemaNode node, Prune(schema.fields[index], top[index]));
    Field field = schema.type->field(index);
    field.type = node.type;
    fields.push_back(std::move(field));
    CollectLeaves(node, &projection.leaves);
    projection.nodes.push_back(std::move(node));
  }
  std::sort(projection.leaves.begin(), projection.leaves.end());
  SLUICE_ASSIGN_OR_RETURN(projection.type, DataType::Struct(std::move(fields)));
  return projection;
}

}  // namespace sluice::parquet
