// The YAML and SQL examples of the documentation are checked as sluice reads them: every ```yaml block of
// README.md and docs/*.md and every .yaml file under examples/ parses as YAML, and every one that
// is a pipeline file (it has flows,
// streams or change feeds at its top level) passes `sluice validate`. What an example cannot carry
// is supplied here: a name and storage when it has none, each `${env:NAME}` it references (a
// number for a name ending in PORT), the
// foreachBatch functions it names (registered as functions that do nothing), and the plugin
// libraries under /opt/sluice/plugins/, which stand for the build's. Every line of a ```sql block
// parses as a flow's condition or select item.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "sluice/connectors/register_formats.h"
#include "sluice/expr/expression.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "testing/paths.h"

namespace sluice::pipeline {
namespace {

struct Example {
  std::string file;
  int line;  // of the block's first line
  std::string text;
  std::string path;  // of a file that is an example whole (examples/), else empty
};

// The blocks fenced as ```<language> in README.md and docs/*.md.
std::vector<Example> Examples(std::string_view language) {
  std::vector<std::filesystem::path> files = {std::filesystem::path(sluice::testing::SourceDir()) / "README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(sluice::testing::SourceDir()) / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::vector<Example> examples;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    std::string line;
    int number = 0;
    std::optional<Example> open;
    while (std::getline(in, line)) {
      ++number;
      if (!open && line == "```" + std::string(language)) {
        open = Example{file.filename().string(), number + 1, "", ""};
      } else if (open && line.starts_with("```")) {
        examples.push_back(std::move(*open));
        open.reset();
      } else if (open) {
        open->text += line + "\n";
      }
    }
    EXPECT_FALSE(open.has_value()) << file << ": a " << language << " block is not closed";
  }
  // The runnable files of examples/ (docs/quickstart.md runs them), each whole.
  const std::filesystem::path runnable = std::filesystem::path(sluice::testing::SourceDir()) / "examples";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(runnable)) {
    if (entry.path().extension() != "." + std::string(language)) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    examples.push_back(Example{std::filesystem::relative(entry.path(), runnable.parent_path()).string(), 1, text.str(),
                               entry.path().string()});
  }
  return examples;
}

// The example as a pipeline file a test can validate: the references it needs supplied.
std::string Completed(const Example& example, const YAML::Node& root, engine::Registry* registry) {
  std::string text = example.text;
  static const std::regex kEnv(R"(\$\{env:([A-Za-z_][A-Za-z0-9_]*)\})");
  for (std::sregex_iterator it(text.begin(), text.end(), kEnv), end; it != end; ++it) {
    const std::string name = (*it)[1].str();
    ::setenv(name.c_str(), name.ends_with("PORT") ? "5432" : "from-the-docs-test", 0);
  }
  static const std::regex kFunction(R"(function: *([A-Za-z_][A-Za-z0-9_]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), kFunction), end; it != end; ++it) {
    (void)registry->RegisterForeachBatch((*it)[1].str(),
                                         [](const RecordBatch&, const engine::BatchContext&) { return Status::OK(); });
  }
  text = std::regex_replace(text, std::regex("/opt/sluice/plugins/"), sluice::testing::BinaryDir() + "/");
  std::string prefix;
  if (!root["name"]) prefix += "name: docs_example\n";
  if (!root["storage"]) prefix += "storage: /var/lib/sluice/docs_example\n";
  return prefix + text;
}

TEST(DocsExamplesTest, EveryYamlExampleParsesAndEveryPipelineValidates) {
  std::vector<Example> examples = Examples("yaml");
  ASSERT_GE(examples.size(), 7u) << "the docs hold YAML examples";
  engine::Registry registry;
  ASSERT_TRUE(connectors::RegisterAllFormats(&registry).ok());
  int validated = 0;
  for (const Example& example : examples) {
    SCOPED_TRACE(example.file + ":" + std::to_string(example.line));
    YAML::Node root;
    try {
      root = YAML::Load(example.text);
    } catch (const YAML::Exception& e) {
      ADD_FAILURE() << "not YAML: " << e.what() << "\n" << example.text;
      continue;
    }
    if (!root.IsMap() || !(root["flows"] || root["materialized_views"] || root["streams"] || root["change_feeds"])) {
      continue;
    }
    ++validated;
    Result<PipelineSpec> spec = ParsePipelineSpec(Completed(example, root, &registry));
    ASSERT_TRUE(spec.ok()) << spec.status().ToString() << "\n" << example.text;
    if (!example.path.empty()) PlaceBesideFile(example.path, &*spec);
    std::vector<Status> problems = ValidatePipeline(*spec, registry);
    for (const Status& problem : problems) ADD_FAILURE() << problem.ToString() << "\n" << example.text;
  }
  EXPECT_GE(validated, 4) << "the pipeline examples are validated, not skipped";
}


// Each line of a ```sql block is a condition or a select item (`expression AS name`) as flows take
// them, and parses.
TEST(DocsExamplesTest, EverySqlExampleIsAnExpressionSluiceParses) {
  std::vector<Example> examples = Examples("sql");
  ASSERT_FALSE(examples.empty());
  for (const Example& example : examples) {
    std::istringstream lines(example.text);
    std::string line;
    for (int offset = 0; std::getline(lines, line); ++offset) {
      if (line.empty()) continue;
      SCOPED_TRACE(example.file + ":" + std::to_string(example.line + offset) + ": " + line);
      Result<expr::NamedExpression> parsed = expr::ParseNamedExpression(line);
      EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    }
  }
}
}  // namespace
}  // namespace sluice::pipeline
