// `sluice copy` between files and Delta tables: a csv file into a Delta table in mode overwrite
// (run twice: the table holds the rows once), and the table out again as JSON lines.
#include <gtest/gtest.h>

#include <fstream>

#include "pipeline/copy_testing.h"
#include "sluice/core/error_classes.h"

namespace sluice::pipeline {
namespace {

class CopyFilesTest : public testing::CopyTest {
 protected:
  CopyFilesTest() : CopyTest("sluice-copy-files") {}
};

TEST_F(CopyFilesTest, CsvIntoDeltaOverwriteTwiceThenOutAsJsonLines) {
  std::ofstream(dir_.Join("prices.csv")) << "sku,price\nA-1,12.50\nB-2,\n";
  const std::string from = "csv:path=" + dir_.Join("prices.csv") + ",header=true,schema='sku string, price decimal(6,2)'";
  for (int run = 0; run < 2; ++run) {
    Result<CopyResult> copied = Copy(from, "delta:table=main.bronze.prices,mode=overwrite");
    ASSERT_TRUE(copied.ok()) << copied.status().ToString();
    EXPECT_EQ(copied->rows, 2);
  }
  Result<CopyResult> exported = Copy("main.bronze.prices", "json:path=" + dir_.Join("out"));
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  EXPECT_EQ(FilesText(dir_.Join("out")), "{\"sku\":\"A-1\",\"price\":\"12.50\"}\n{\"sku\":\"B-2\"}\n");
}

TEST_F(CopyFilesTest, ADeltaModeOtherThanAppendOrOverwriteIsRefused) {
  std::ofstream(dir_.Join("n.csv")) << "1\n";
  Result<CopyResult> copied = Copy("csv:path=" + dir_.Join("n.csv"), "delta:table=main.bronze.n,mode=ignore");
  EXPECT_EQ(copied.status().error_class(), errors::kInvalidOptions) << copied.status().ToString();
}

}  // namespace
}  // namespace sluice::pipeline
