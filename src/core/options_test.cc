#include "sluice/core/options.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::microseconds;
using Given = std::map<std::string, std::string>;

constexpr std::string_view kModes[] = {"append", "overwrite"};
constexpr OptionSpec kSinkOptions[] = {
    {"url", OptionType::kString, std::nullopt, true, "libpq connection string"},
    {"user", OptionType::kString, std::nullopt, false, "database user"},
    {"password", OptionType::kSecret, std::nullopt, false, "database password"},
    {"batchSize", OptionType::kInt, "1000", false, "rows per INSERT"},
    {"maxBytes", OptionType::kLong, "10000000000", false, "bytes per flush"},
    {"sampleRatio", OptionType::kDouble, "0.5", false, "fraction of rows sampled"},
    {"truncate", OptionType::kBool, "false", false, "truncate before an overwrite"},
    {"flushInterval", OptionType::kDuration, "100ms", false, "longest wait before a flush"},
    {"mode", OptionType::kEnum, "append", false, "write mode", kModes},
    {"kafka.*", OptionType::kString, std::nullopt, false, "passed to librdkafka"},
    {.name = "port", .type = OptionType::kInt, .default_value = "5432", .doc = "server port", .minimum = 1,
     .maximum = 65535},
    {.name = "fillFactor", .type = OptionType::kDouble, .doc = "fraction of a page filled", .minimum = 0.1,
     .maximum = 1},
};

constexpr std::string_view kSinkErrors = "JDBC_STREAMING_SINK_INVALID_OPTIONS";

Result<ValidatedOptions> Validate(const Given& given) {
  return ValidateOptions("postgres sink", kSinkOptions, given, kSinkErrors);
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

TEST(OptionsTest, GivenValuesAreParsedAndDefaultsFillTheRest) {
  Result<ValidatedOptions> options =
      Validate({{"url", "postgresql://db/app"}, {"batchSize", "500"}, {"flushInterval", "2 seconds"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetString("url"), "postgresql://db/app");
  EXPECT_EQ(options->GetInt64("batchSize"), 500);
  EXPECT_EQ(options->GetInt64("maxBytes"), 10000000000);
  EXPECT_DOUBLE_EQ(options->GetDouble("sampleRatio"), 0.5);
  EXPECT_FALSE(options->GetBool("truncate"));
  EXPECT_EQ(options->GetDuration("flushInterval"), std::chrono::seconds(2));
  EXPECT_EQ(options->GetString("mode"), "append");
  EXPECT_TRUE(options->Has("url"));
  EXPECT_FALSE(options->Has("user"));
  EXPECT_FALSE(options->Has("password"));
}

TEST(OptionsTest, ErrorsUseTheCallersClassAndDefaultToInvalidOptions) {
  EXPECT_EQ(Validate({}).status().error_class(), kSinkErrors);
  EXPECT_EQ(ValidateOptions("postgres sink", kSinkOptions, {}).status().error_class(), errors::kInvalidOptions);
}

TEST(OptionsTest, UnknownKeyIsRejectedWithTheClosestKnownName) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"batchsise", "5"}});
  ASSERT_FALSE(options.ok());
  std::string_view message = options.status().message();
  EXPECT_TRUE(Contains(message, "postgres sink")) << message;
  EXPECT_TRUE(Contains(message, "unknown option 'batchsise' (did you mean 'batchSize'?)")) << message;
  EXPECT_TRUE(Contains(message, "Known options: batchSize, fillFactor, flushInterval, kafka.*, maxBytes")) << message;
}

TEST(OptionsTest, UnknownKeyFarFromEveryNameGetsNoSuggestion) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"compression", "zstd"}});
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(Contains(options.status().message(), "unknown option 'compression'. Known options:"))
      << options.status().message();
}

TEST(OptionsTest, MissingRequiredKeyIsNamed) {
  Result<ValidatedOptions> options = Validate({{"batchSize", "5"}});
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().message(),
            "invalid options for postgres sink: missing required option 'url' (libpq connection string)");
}

TEST(OptionsTest, AllProblemsAreReportedTogether) {
  Result<ValidatedOptions> options = Validate({{"batchSize", "many"}, {"truncate", "yes"}, {"mod", "append"}});
  ASSERT_FALSE(options.ok());
  std::string_view message = options.status().message();
  EXPECT_TRUE(Contains(message, "unknown option 'mod' (did you mean 'mode'?)")) << message;
  EXPECT_TRUE(Contains(message, "option 'batchSize' must be an integer")) << message;
  EXPECT_TRUE(Contains(message, "option 'truncate' must be true or false, got 'yes'")) << message;
  EXPECT_TRUE(Contains(message, "missing required option 'url'")) << message;
}

TEST(OptionsTest, WrongTypesAreRejected) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  };
  for (const Case& c : {
           Case{"batchSize", "12abc", "option 'batchSize' must be an integer"},
           Case{"batchSize", "3000000000", "option 'batchSize' must be an integer between"},
           Case{"batchSize", "", "option 'batchSize' must be an integer"},
           Case{"maxBytes", "1e6", "option 'maxBytes' must be a 64-bit integer"},
           Case{"sampleRatio", "half", "option 'sampleRatio' must be a finite number"},
           Case{"sampleRatio", "inf", "option 'sampleRatio' must be a finite number"},
           Case{"truncate", "1", "option 'truncate' must be true or false, got '1'"},
           Case{"mode", "upsert", "option 'mode' must be one of append, overwrite, got 'upsert'"},
       }) {
    Result<ValidatedOptions> options = Validate({{"url", "u"}, {c.key, c.value}});
    ASSERT_FALSE(options.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(options.status().error_class(), kSinkErrors);
    EXPECT_TRUE(Contains(options.status().message(), c.expected)) << options.status().message();
  }
}

TEST(OptionsTest, NumbersOutsideTheirBoundsAreRejected) {
  struct Case {
    const char* key;
    const char* value;
    const char* expected;
  };
  for (const Case& c : {
           Case{"port", "0", "option 'port' must be at least 1, got '0'"},
           Case{"port", "70000", "option 'port' must be at most 65535, got '70000'"},
           Case{"fillFactor", "0.05", "option 'fillFactor' must be at least 0.1, got '0.05'"},
           Case{"fillFactor", "1.5", "option 'fillFactor' must be at most 1, got '1.5'"},
       }) {
    Result<ValidatedOptions> options = Validate({{"url", "u"}, {c.key, c.value}});
    ASSERT_FALSE(options.ok()) << c.key << "=" << c.value;
    EXPECT_TRUE(Contains(options.status().message(), c.expected)) << options.status().message();
  }
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"port", "65535"}, {"fillFactor", "0.1"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetInt64("port"), 65535);
  EXPECT_DOUBLE_EQ(options->GetDouble("fillFactor"), 0.1);
}

TEST(OptionsTest, ScalarValuesAcceptSurroundingSpacesAndAnyCase) {
  Result<ValidatedOptions> options =
      Validate({{"url", " u "}, {"batchSize", " 7 "}, {"truncate", "TRUE"}, {"mode", "OverWrite"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetString("url"), " u ");
  EXPECT_EQ(options->GetInt64("batchSize"), 7);
  EXPECT_TRUE(options->GetBool("truncate"));
  EXPECT_EQ(options->GetString("mode"), "overwrite");
}

TEST(OptionsTest, NamesMatchCaseInsensitively) {
  Result<ValidatedOptions> options = Validate({{"URL", "u"}, {"BATCHSIZE", "9"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetString("url"), "u");
  EXPECT_EQ(options->GetInt64("batchSize"), 9);
  EXPECT_EQ(options->GetInt64("batchsize"), 9);
  EXPECT_EQ(options->Redacted(), "{batchSize=9, url=u}");
}

TEST(OptionsTest, TheSameNameInTwoCasesIsRejected) {
  Result<ValidatedOptions> options = Validate({{"url", "a"}, {"Url", "b"}});
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(Contains(options.status().message(), "option 'url' is given more than once"))
      << options.status().message();
}

TEST(OptionsTest, PrefixFamiliesPassThroughKeepingTheCaseOfTheRest) {
  Result<ValidatedOptions> options =
      Validate({{"url", "u"}, {"kafka.bootstrap.servers", "b:9092"}, {"KAFKA.client.ID", "c"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->WithPrefix("kafka."),
            (std::map<std::string, std::string>{{"bootstrap.servers", "b:9092"}, {"client.ID", "c"}}));
}

TEST(OptionsTest, AMisspelledFamilyPrefixSuggestsTheFamily) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"kafak.bootstrap.servers", "b:9092"}});
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(Contains(options.status().message(), "unknown option 'kafak.bootstrap.servers' (did you mean 'kafka.*'?)"))
      << options.status().message();
}

TEST(OptionsTest, APrefixAloneIsNotAFamilyMember) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"kafka.", "x"}});
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(Contains(options.status().message(), "unknown option 'kafka.' (did you mean 'kafka.*'?)"))
      << options.status().message();
}

TEST(OptionsTest, DurationsAcceptUnitsInShortAndLongForms) {
  struct Case {
    const char* text;
    microseconds expected;
  };
  for (const Case& c : {
           Case{"100 milliseconds", std::chrono::milliseconds(100)},
           Case{"100ms", std::chrono::milliseconds(100)},
           Case{"2 seconds", std::chrono::seconds(2)},
           Case{"5s", std::chrono::seconds(5)},
           Case{"1 second", std::chrono::seconds(1)},
           Case{"1 minute", std::chrono::minutes(1)},
           Case{"1 min", std::chrono::minutes(1)},
           Case{"2 hours", std::chrono::hours(2)},
           Case{"1h", std::chrono::hours(1)},
           Case{"250 microseconds", microseconds(250)},
           Case{"250us", microseconds(250)},
           Case{"1 day", std::chrono::hours(24)},
           Case{"3 Days", std::chrono::hours(72)},
           Case{"0s", microseconds(0)},
       }) {
    Result<microseconds> parsed = ParseDuration(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, c.expected) << c.text;
  }
}

TEST(OptionsTest, BadDurationsShowTheAcceptedForms) {
  for (const char* text : {"100", "5 fortnights", "-5s", "1.5s", "s", ""}) {
    Result<microseconds> parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(Contains(parsed.status().message(), "100ms, 100 milliseconds, 5s")) << parsed.status().message();
  }
  // A duration that does not fit is too long, not malformed, whichever part overflows.
  for (const char* text : {"99999999999999999 days", "106751992 days", "9223372036854775807 hours",
                           "99999999999999999999999 us", "9223372036854775808us"}) {
    Result<microseconds> parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(Contains(parsed.status().message(), "longer than the longest duration")) << parsed.status().message();
  }
  EXPECT_TRUE(ParseDuration("106751991 days").ok());
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"flushInterval", "100"}});
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(Contains(options.status().message(), "option 'flushInterval' must be a duration: a number and a unit"))
      << options.status().message();
  EXPECT_TRUE(Contains(options.status().message(), "got '100'")) << options.status().message();
}

class SecretOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("SLUICE_TEST_PASSWORD", "hunter2", 1);
    ::unsetenv("SLUICE_TEST_UNSET");
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-secret-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    std::ofstream(directory_ + "/password") << "s3cr3t-from-file\n";
    std::ofstream(directory_ + "/batch") << "not-a-number\n";
  }
  void TearDown() override {
    ::unsetenv("SLUICE_TEST_PASSWORD");
    std::filesystem::remove_all(directory_);
  }

  std::string directory_;
};

TEST_F(SecretOptionsTest, EnvironmentReferencesResolve) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", "${env:SLUICE_TEST_PASSWORD}"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetSecret("password"), "hunter2");
}

TEST_F(SecretOptionsTest, FileReferencesResolveWithoutTheTrailingNewline) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", "${file:" + directory_ + "/password}"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetSecret("password"), "s3cr3t-from-file");
}

TEST_F(SecretOptionsTest, ReferencesInsideAValueMakeItSensitive) {
  Result<ValidatedOptions> options =
      Validate({{"url", "postgresql://app:${env:SLUICE_TEST_PASSWORD}@db/app"}, {"user", "app"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetString("url"), "postgresql://app:hunter2@db/app");
  EXPECT_TRUE(options->IsSensitive("url"));
  EXPECT_FALSE(options->IsSensitive("user"));
  EXPECT_EQ(options->Redacted(), "{url=*****, user=app}");
}

TEST_F(SecretOptionsTest, SecretsNeverAppearInRedacted) {
  Result<ValidatedOptions> options =
      Validate({{"url", "u"}, {"password", "${env:SLUICE_TEST_PASSWORD}"}, {"kafka.sasl.password", "${env:SLUICE_TEST_PASSWORD}"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  std::string redacted = options->Redacted();
  EXPECT_EQ(redacted, "{kafka.sasl.password=*****, password=*****, url=u}");
  EXPECT_EQ(options->WithPrefix("kafka.").at("sasl.password"), "hunter2");
}

// A secret option takes a reference and nothing else, whatever else it is given: the secret
// itself, a reference with text around it, a malformed or relative reference. The message never
// holds the value.
TEST_F(SecretOptionsTest, ASecretGivenAsAnythingButOneReferenceIsRefused) {
  ::setenv("SLUICE_TEST_PASSWORD", "hunter2", 1);
  for (std::string value : {"plain-password", "", "pre${env:SLUICE_TEST_PASSWORD}", "${env:SLUICE_TEST_PASSWORD}post",
                            "${vault:x}", "${env:SLUICE_TEST_PASSWORD}${env:SLUICE_TEST_PASSWORD}", "{env:X}"}) {
    SCOPED_TRACE(value);
    Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", value}});
    ASSERT_FALSE(options.ok());
    EXPECT_EQ(options.status().error_class(), errors::kConnectionLiteralSecret);
    if (!value.empty()) {
      EXPECT_EQ(options.status().message().find(value), std::string_view::npos);
    }
  }
}

TEST_F(SecretOptionsTest, AMissingEnvironmentVariableNamesTheReferenceOnly) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", "${env:SLUICE_TEST_UNSET}"}});
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().error_class(), errors::kUnresolvedSecret);
  EXPECT_TRUE(Contains(options.status().message(), "${env:SLUICE_TEST_UNSET}")) << options.status().message();
  EXPECT_TRUE(Contains(options.status().message(), "option 'password' of postgres sink"));
}

TEST_F(SecretOptionsTest, AnUnreadableFileNamesTheReferenceOnly) {
  for (const std::string& path : {directory_ + "/absent", directory_}) {
    Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", "${file:" + path + "}"}});
    ASSERT_FALSE(options.ok()) << path;
    EXPECT_EQ(options.status().error_class(), errors::kUnresolvedSecret);
    EXPECT_TRUE(Contains(options.status().message(), "${file:" + path + "}")) << options.status().message();
  }
}

TEST_F(SecretOptionsTest, AnUnterminatedReferenceIsUnresolved) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"password", "${env:SLUICE_TEST_PASSWORD"}});
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().error_class(), errors::kUnresolvedSecret);
  EXPECT_TRUE(Contains(options.status().message(), "no closing '}'")) << options.status().message();
}

TEST_F(SecretOptionsTest, ValuesFromReferencesNeverAppearInTypeErrors) {
  ::setenv("SLUICE_TEST_PASSWORD", "hunter2", 1);
  Result<ValidatedOptions> options = Validate(
      {{"url", "u"}, {"batchSize", "${env:SLUICE_TEST_PASSWORD}"}, {"maxBytes", "${file:" + directory_ + "/batch}"}});
  ASSERT_FALSE(options.ok());
  std::string_view message = options.status().message();
  EXPECT_TRUE(Contains(message, "option 'batchSize' must be an integer")) << message;
  EXPECT_TRUE(Contains(message, "got a value from a secret reference")) << message;
  EXPECT_FALSE(Contains(message, "hunter2")) << message;
  EXPECT_FALSE(Contains(message, "not-a-number")) << message;
}

TEST_F(SecretOptionsTest, ReferencesWorkForTypedOptions) {
  ::setenv("SLUICE_TEST_BATCH", "250", 1);
  Result<ValidatedOptions> options = Validate({{"url", "u"}, {"batchSize", "${env:SLUICE_TEST_BATCH}"}});
  ::unsetenv("SLUICE_TEST_BATCH");
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->GetInt64("batchSize"), 250);
  EXPECT_EQ(options->Redacted(), "{batchSize=*****, url=u}");
}

TEST(OptionsDeathTest, ReadingAnOptionWithTheWrongGetterIsAProgrammingError) {
  Result<ValidatedOptions> options = Validate({{"url", "u"}});
  ASSERT_TRUE(options.ok());
  EXPECT_DEATH(options->GetInt64("url"), "does not match its declared type");
  EXPECT_DEATH(options->GetString("user"), "has no value");
}

}  // namespace
}  // namespace sluice
