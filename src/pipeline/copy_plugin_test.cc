// Copies through plugin formats: the example `sequence` plugin (examples/plugins/sequence) loaded
// by path, and the errors of libraries that are no plugin or one built for another ABI.
#include <gtest/gtest.h>

#include "pipeline/copy_testing.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/plugin.h"
#include "testing/paths.h"

namespace sluice::pipeline {
namespace {

std::string PluginPath(const std::string& name) { return sluice::testing::BinaryDir() + "/lib" + name + ".so"; }

class CopyPluginTest : public testing::CopyTest {
 protected:
  CopyPluginTest() : CopyTest("sluice-plugin") {}

  const std::string sequence_ = "plugin:" + PluginPath("sluice_sequence_plugin");
};

TEST_F(CopyPluginTest, TheSequencePluginIsLoadedByPathAndCopiedFrom) {
  Result<CopyResult> copied = Copy(sequence_ + ":start=1,end=10,step=2,rowsPerBatch=2", "csv:path=" + dir_.Join("out"));
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->rows, 5);
  EXPECT_EQ(FilesText(dir_.Join("out")), "1\n3\n5\n7\n9\n");
}

TEST_F(CopyPluginTest, OptionsAreCheckedAgainstThePluginsOwnTable) {
  Result<CopyResult> copied = Copy(sequence_ + ":start=1,stop=10", "csv:path=" + dir_.Join("out"));
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().error_class(), errors::kInvalidOptions);
  EXPECT_NE(copied.status().message().find("stop"), std::string::npos) << copied.status().message();
}

TEST_F(CopyPluginTest, AMissingLibraryFailsToLoad) {
  Result<CopyResult> copied = Copy("plugin:" + dir_.Join("libabsent.so") + ":end=3", "csv:path=" + dir_.Join("out"));
  EXPECT_EQ(copied.status().error_class(), errors::kPluginLoadFailed) << copied.status().ToString();
}

TEST_F(CopyPluginTest, ARelativePathIsRefused) {
  engine::Registry registry;
  EXPECT_EQ(engine::LoadPlugin(&registry, "plugin:libsluice_sequence_plugin.so").error_class(),
            errors::kPluginLoadFailed);
}

TEST_F(CopyPluginTest, ALibraryWithoutTheEntryPointIsNoPlugin) {
  engine::Registry registry;
  Status loaded = engine::LoadPlugin(&registry, "plugin:" + PluginPath("sluice_no_entry_test_plugin"));
  EXPECT_EQ(loaded.error_class(), errors::kPluginSymbolNotFound) << loaded.ToString();
}

TEST_F(CopyPluginTest, APluginBuiltForAnotherAbiIsRefused) {
  engine::Registry registry;
  Status loaded = engine::LoadPlugin(&registry, "plugin:" + PluginPath("sluice_wrong_abi_test_plugin"));
  EXPECT_EQ(loaded.error_class(), errors::kPluginAbiMismatch) << loaded.ToString();
  EXPECT_NE(loaded.message().find("version " + std::to_string(engine::kPluginAbiVersion + 1000)), std::string::npos)
      << loaded.message();
}

TEST_F(CopyPluginTest, LoadingTwiceRegistersTheFormatOnce) {
  engine::Registry registry;
  ASSERT_TRUE(engine::LoadPlugin(&registry, sequence_).ok());
  ASSERT_TRUE(engine::LoadPlugin(&registry, sequence_).ok());
  EXPECT_NE(registry.FindSourceFormat(sequence_), nullptr);
  EXPECT_EQ(registry.FindSinkFormat(sequence_), nullptr);
}

TEST(ParsePluginSpecTest, ThePluginPathIsTheFormatUpToTheNextColon) {
  Result<CopyEndpoint> spec = ParseEndpointSpec("plugin:/opt/plugins/libseq.so:start=1,end=5");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->format, "plugin:/opt/plugins/libseq.so");
  EXPECT_EQ(spec->options, (std::map<std::string, std::string>{{"start", "1"}, {"end", "5"}}));
}

}  // namespace
}  // namespace sluice::pipeline
