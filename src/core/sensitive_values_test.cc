#include "sluice/core/sensitive_values.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "sluice/core/options.h"
#include "sluice/core/status.h"

namespace sluice {
namespace {

constexpr OptionSpec kSpecs[] = {
    {"host", OptionType::kString, std::nullopt, false, "server"},
    {"user", OptionType::kString, std::nullopt, false, "role"},
    {"password", OptionType::kSecret, std::nullopt, false, "password"},
};

// A value given by reference is sensitive even when its option is no secret: once validated, it
// is masked in every error made afterwards, wherever the text came from (a library's message
// quoting the host back included).
TEST(SensitiveValuesTest, ValuesFromReferencesAreMaskedInEveryLaterError) {
  ::setenv("SLUICE_TEST_SENSITIVE_HOST", "db-7.internal.example", 1);
  ::setenv("SLUICE_TEST_SENSITIVE_PASSWORD", "correct horse battery", 1);
  Result<ValidatedOptions> options =
      ValidateOptions("test", kSpecs,
                      {{"host", "${env:SLUICE_TEST_SENSITIVE_HOST}"}, {"user", "plain_user"},
                       {"password", "${env:SLUICE_TEST_SENSITIVE_PASSWORD}"}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  Status error = Status::Error("IO_ERROR", "could not connect to server \"db-7.internal.example\" as plain_user "
                                           "(password correct horse battery rejected)");
  EXPECT_EQ(error.message(), "could not connect to server \"*****\" as plain_user (password ***** rejected)");
  EXPECT_EQ(error.WithContext("sink 'pg'").message(),
            "sink 'pg': could not connect to server \"*****\" as plain_user (password ***** rejected)");
  EXPECT_EQ(ScrubSensitiveValues("db-7.internal.exampledb-7.internal.example"), "**********");
}

TEST(SensitiveValuesTest, ShortValuesAreNotRemembered) {
  RememberSensitiveValue("ab");
  EXPECT_EQ(ScrubSensitiveValues("ab cd ab"), "ab cd ab");
  RememberSensitiveValue("s3cr3t-and-longer");
  RememberSensitiveValue("s3cr3t");
  // The longer value is masked whole, not as its prefix plus the rest.
  EXPECT_EQ(ScrubSensitiveValues("x s3cr3t-and-longer y s3cr3t"), "x ***** y *****");
}

}  // namespace
}  // namespace sluice
