// Options: every source, sink and service declares the options it accepts in one table of
// OptionSpec, and ValidateOptions() checks what the user gave against it before any data moves.
//
//   constexpr std::string_view kModes[] = {"append", "overwrite"};
//   constexpr OptionSpec kPgSinkOptions[] = {
//       {"url", OptionType::kString, std::nullopt, true, "libpq connection string"},
//       {"password", OptionType::kSecret, std::nullopt, false, "database password"},
//       {"batchSize", OptionType::kInt, "1000", false, "rows per INSERT"},
//       {"flushInterval", OptionType::kDuration, "100ms", false, "longest wait before a flush"},
//       {"mode", OptionType::kEnum, "append", false, "write mode", kModes},
//       {"kafka.*", OptionType::kString, std::nullopt, false, "passed to librdkafka"},
//   };
//   SLUICE_ASSIGN_OR_RETURN(ValidatedOptions options,
//       ValidateOptions("postgres sink", kPgSinkOptions, given, errors::kJdbcStreamingSinkInvalidOptions));
//
// Rules:
// - Names match case-insensitively, as Spark's do; the spec's spelling is canonical.
// - A spec named "<prefix>.*" accepts every key starting with "<prefix>." (a pass-through family,
//   such as librdkafka properties); the family's type applies to each member.
// - Values may contain secret references, resolved during validation: ${env:NAME} (an
//   environment variable) and ${file:/absolute/path} (a file's content, one trailing newline
//   stripped). A value is *sensitive* when its option is of type kSecret or when any part of it
//   came from a reference: sensitive values never appear in error messages or in Redacted().
// - Durations are a non-negative integer and a unit: "100ms", "100 milliseconds", "5s",
//   "2 seconds", "1 min", "1 minute", "1h", "2 hours", "250us", "250 microseconds", "1d", "1 day".
//   A bare number is rejected, since its unit would be a guess.
// - Booleans are "true" or "false" (any case). kInt is a 32-bit integer, kLong a 64-bit one.
//   Enum values match an allowed value case-insensitively and read back in its canonical spelling.
//   Values of these types may carry surrounding spaces; strings and secrets are kept verbatim.
//
// Errors: an unknown key (with the closest known name suggested), a value of the wrong type or out
// of its spec's bounds, a missing required key or the same key given twice in different cases fail with the caller's error
// class, naming the component and the key; all such problems are reported together in one message.
// A reference that cannot be resolved fails with UNRESOLVED_SECRET naming the reference. A kSecret
// option given as anything but one reference (the secret itself, written into a file) fails with
// CONNECTION_LITERAL_SECRET, without the value.
//
// ValidatedOptions is an immutable value, safe to read from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/error_classes.h"
#include "sluice/core/status.h"

namespace sluice {

enum class OptionType { kString, kInt, kLong, kDouble, kBool, kDuration, kEnum, kSecret };

// One accepted option. Specs are meant to live in static tables: the strings are views and must
// outlive every ValidatedOptions built from them.
struct OptionSpec {
  std::string_view name = {};
  OptionType type = OptionType::kString;
  // Used when the option is not given. Defaults are trusted text written by the programmer, in the
  // same syntax as a user's value.
  std::optional<std::string_view> default_value = std::nullopt;
  bool required = false;
  std::string_view doc = {};
  // The accepted values of a kEnum option.
  std::span<const std::string_view> allowed_values = {};
  // Inclusive bounds of a kInt, kLong or kDouble option, or of a kDuration in microseconds:
  //   {.name = "rowsPerSecond", .type = OptionType::kLong, .default_value = "1", .doc = "...", .minimum = 1}
  std::optional<double> minimum = std::nullopt;
  std::optional<double> maximum = std::nullopt;
  // For a kString option: the reason its text is refused ("is not schema.table"), or "" when it
  // is fine. Whatever can be checked without data is checked here, so that `validate` finds it.
  std::string (*check)(std::string_view text) = nullptr;
};

class ValidatedOptions {
 public:
  // The getters take the option's name (any case). Asking for a name that is not in the spec,
  // with a getter that does not match its type, or for an option that has neither a value nor a
  // default is a programming error and aborts; use Has() for options without a default.

  // Whether the option was given or has a default.
  bool Has(std::string_view name) const;
  // kString and kEnum options (an enum in its canonical spelling).
  const std::string& GetString(std::string_view name) const;
  // kInt and kLong options.
  int64_t GetInt64(std::string_view name) const;
  double GetDouble(std::string_view name) const;
  bool GetBool(std::string_view name) const;
  std::chrono::microseconds GetDuration(std::string_view name) const;
  // kSecret options. The returned value must never be logged or put in a message.
  const std::string& GetSecret(std::string_view name) const;
  // Whether the option's value is sensitive (a kSecret option or a value from a reference).
  bool IsSensitive(std::string_view name) const;

  // The given members of a prefix family, keyed by the rest of the name after the prefix, which
  // keeps the case the user wrote: WithPrefix("kafka.") gives {"bootstrap.servers": "..."}.
  std::map<std::string, std::string> WithPrefix(std::string_view prefix) const;

  // The given options (not the defaults) under their canonical names, sorted by name, with
  // sensitive values shown as *****: "{batchSize=500, password=*****, url=postgres://db}".
  std::string Redacted() const;

 private:
  friend Result<ValidatedOptions> ValidateOptions(std::string_view, std::span<const OptionSpec>,
                                                  const std::map<std::string, std::string>&, std::string_view);
  struct Value {
    const OptionSpec* spec = nullptr;
    std::string name;  // canonical, or for family members the name as given
    std::string text;  // resolved text (the canonical value for an enum)
    bool given = false;
    bool sensitive = false;
    int64_t integer = 0;
    double real = 0;
    bool boolean = false;
    std::chrono::microseconds duration{0};
  };
  const Value& Find(std::string_view name, std::initializer_list<OptionType> types) const;

  std::string component_;
  std::map<std::string, Value> values_;  // keyed by lower-case name
};

Result<ValidatedOptions> ValidateOptions(std::string_view component, std::span<const OptionSpec> specs,
                                         const std::map<std::string, std::string>& given,
                                         std::string_view error_class = errors::kInvalidOptions);

// Whether `value` is exactly one secret reference, `${env:NAME}` or `${file:/absolute/path}`: the
// only form a kSecret option (or a connection's secret field) may take.
bool IsSecretReference(std::string_view value);

// Parses a duration as described above; INVALID_OPTIONS with the accepted forms otherwise.
Result<std::chrono::microseconds> ParseDuration(std::string_view text);

}  // namespace sluice
