// Keeps include/sluice/core/error_classes.h and docs/errors.md in step: every class a caller can
// receive is documented, and the document lists no class that does not exist.
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include "testing/paths.h"

namespace sluice {
namespace {

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(sluice::testing::SourceDir() + "/" + relative);
  EXPECT_TRUE(in.good()) << "cannot read " << relative;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Class names assigned in the header: `inline constexpr std::string_view kX = "NAME";`
std::multiset<std::string> ClassesInHeader() {
  std::string header = ReadSourceFile("include/sluice/core/error_classes.h");
  std::multiset<std::string> classes;
  std::regex assignment("= \"([A-Z0-9_]+)\"");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), assignment); it != std::sregex_iterator(); ++it) {
    classes.insert((*it)[1].str());
  }
  return classes;
}

struct DocumentedClass {
  std::string section;
  std::string description;
};

// Entries of the form "- `NAME`: description", each under a "## section" heading.
std::multimap<std::string, DocumentedClass> ClassesInDoc() {
  std::istringstream doc(ReadSourceFile("docs/errors.md"));
  std::multimap<std::string, DocumentedClass> classes;
  std::regex entry("^- `([A-Z0-9_]+)`: (.*)$");
  std::string section;
  std::string line;
  while (std::getline(doc, line)) {
    if (line.starts_with("## ")) section = line.substr(3);
    std::smatch match;
    if (std::regex_match(line, match, entry)) classes.emplace(match[1].str(), DocumentedClass{section, match[2].str()});
  }
  return classes;
}

TEST(ErrorClassesTest, HeaderDefinesClassesOnce) {
  std::multiset<std::string> header = ClassesInHeader();
  EXPECT_GT(header.size(), 10u);
  for (const std::string& name : header) EXPECT_EQ(header.count(name), 1u) << name << " is defined twice";
}

TEST(ErrorClassesTest, EveryClassInTheHeaderIsDocumented) {
  std::multimap<std::string, DocumentedClass> doc = ClassesInDoc();
  for (const std::string& name : ClassesInHeader()) {
    EXPECT_TRUE(doc.contains(name)) << name << " is missing from docs/errors.md: add a line \"- `" << name
                                    << "`: what it means and what the user should do\" under its area's heading";
  }
}

TEST(ErrorClassesTest, EveryDocumentedClassIsInTheHeader) {
  std::multiset<std::string> header = ClassesInHeader();
  for (const auto& [name, documented] : ClassesInDoc()) {
    EXPECT_TRUE(header.contains(name)) << name << " is documented under \"" << documented.section
                                       << "\" but not defined in include/sluice/core/error_classes.h";
  }
}

TEST(ErrorClassesTest, EachClassIsDocumentedOnceUnderAHeadingWithAnExplanation) {
  std::multimap<std::string, DocumentedClass> doc = ClassesInDoc();
  for (const auto& [name, documented] : doc) {
    EXPECT_EQ(doc.count(name), 1u) << name << " is documented more than once";
    EXPECT_FALSE(documented.section.empty()) << name << " is not under a \"## area\" heading";
    EXPECT_GE(documented.description.size(), 40u) << name << " needs a real explanation";
  }
}

}  // namespace
}  // namespace sluice
