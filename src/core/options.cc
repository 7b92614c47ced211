#include "sluice/core/options.h"

#include "sluice/core/ascii.h"
#include "sluice/core/edit_distance.h"
#include "sluice/core/sensitive_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace sluice {
namespace {

constexpr std::string_view kMask = "*****";
constexpr std::string_view kDurationForms =
    "a number and a unit, such as 250us, 100ms, 100 milliseconds, 5s, 2 seconds, 1 min, 1 minute, 1h, 2 hours, "
    "1d or 1 day";

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool IsFamily(const OptionSpec& spec) { return spec.name.ends_with(".*"); }

// "kafka.*" -> "kafka."
std::string_view FamilyPrefix(const OptionSpec& spec) { return spec.name.substr(0, spec.name.size() - 1); }

// The known option closest to an unknown key, if it is close enough to be a likely typo.
std::optional<std::string_view> ClosestName(std::string_view key, std::span<const OptionSpec> specs) {
  std::string lower_key = AsciiLower(key);
  std::optional<std::string_view> best;
  size_t best_distance = std::max<size_t>(2, key.size() / 3) + 1;
  for (const OptionSpec& spec : specs) {
    std::string candidate = AsciiLower(IsFamily(spec) ? FamilyPrefix(spec) : spec.name);
    size_t distance = EditDistance(lower_key, candidate);
    if (IsFamily(spec) && lower_key.size() > candidate.size()) {
      // "kafak.bootstrap.servers" is close to the family "kafka.*": compare the prefix part.
      distance = EditDistance(lower_key.substr(0, candidate.size()), candidate);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = spec.name;
    }
  }
  return best;
}

std::string KnownNames(std::span<const OptionSpec> specs) {
  std::vector<std::string_view> names;
  for (const OptionSpec& spec : specs) names.push_back(spec.name);
  std::sort(names.begin(), names.end(), [](std::string_view a, std::string_view b) { return AsciiLower(a) < AsciiLower(b); });
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::optional<std::string> ReadRegularFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in || in.bad()) return std::nullopt;
  return std::move(content).str();
}

// Replaces every ${env:NAME} and ${file:/path} in `text`. Sets *from_reference when any was
// replaced. Error messages name the reference, never what it resolves to.
Result<std::string> ResolveReferences(std::string_view text, std::string_view key, std::string_view component,
                                      bool* from_reference) {
  std::string out;
  size_t position = 0;
  for (;;) {
    size_t env = text.find("${env:", position);
    size_t file = text.find("${file:", position);
    size_t start = std::min(env, file);
    if (start == std::string_view::npos) break;
    out.append(text.substr(position, start - position));
    size_t end = text.find('}', start);
    std::string where = "option '" + std::string(key) + "' of " + std::string(component);
    if (end == std::string_view::npos) {
      return Status::Error(errors::kUnresolvedSecret,
                           where + ": a secret reference starting with '" +
                               std::string(text.substr(start, start == env ? 6 : 7)) +
                               "' has no closing '}'; write ${env:NAME} or ${file:/path}");
    }
    std::string reference(text.substr(start, end + 1 - start));
    if (start == env) {
      std::string name(text.substr(start + 6, end - start - 6));
      const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
      if (value == nullptr) {
        return Status::Error(errors::kUnresolvedSecret,
                             where + ": " + reference + " refers to environment variable '" + name +
                                 "', which is not set; set it or change the reference");
      }
      out += value;
    } else {
      std::string path(text.substr(start + 7, end - start - 7));
      std::optional<std::string> content = ReadRegularFile(path);
      if (!content) {
        return Status::Error(errors::kUnresolvedSecret, where + ": " + reference + " refers to file '" + path +
                                                            "', which cannot be read; check that it exists and "
                                                            "is readable by this process");
      }
      std::string value = std::move(*content);
      if (value.ends_with("\r\n")) {
        value.resize(value.size() - 2);
      } else if (value.ends_with('\n')) {
        value.pop_back();
      }
      out += value;
    }
    *from_reference = true;
    position = end + 1;
  }
  out.append(text.substr(position));
  return out;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

constexpr std::string_view kTooLong =
    "is longer than the longest duration, 9223372036854775807 microseconds (about 292,000 years)";

// The duration, or nothing with the reason in `*why`.
std::optional<std::chrono::microseconds> ParseDurationText(std::string_view text, std::string* why) {
  *why = "must be a duration: " + std::string(kDurationForms);
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  int64_t amount = 0;
  if (!ParseNumber(text.substr(0, digits), &amount)) {
    if (digits > 0) *why = kTooLong;
    return std::nullopt;
  }
  std::string unit = AsciiLower(Trim(text.substr(digits)));
  struct Unit {
    std::string_view names[5];
    int64_t micros;
  };
  static constexpr Unit kUnits[] = {
      {{"us", "micro", "micros", "microsecond", "microseconds"}, 1},
      {{"ms", "milli", "millis", "millisecond", "milliseconds"}, 1000},
      {{"s", "sec", "secs", "second", "seconds"}, 1000000},
      {{"m", "min", "mins", "minute", "minutes"}, 60LL * 1000000},
      {{"h", "hr", "hrs", "hour", "hours"}, 3600LL * 1000000},
      {{"d", "day", "days", "", ""}, 86400LL * 1000000},
  };
  for (const Unit& candidate : kUnits) {
    for (std::string_view name : candidate.names) {
      if (name.empty() || name != unit) continue;
      if (amount > std::numeric_limits<int64_t>::max() / candidate.micros) {
        *why = kTooLong;
        return std::nullopt;
      }
      return std::chrono::microseconds(amount * candidate.micros);
    }
  }
  return std::nullopt;
}

std::string AllowedList(const OptionSpec& spec) {
  std::string out;
  for (std::string_view allowed : spec.allowed_values) {
    if (!out.empty()) out += ", ";
    out += allowed;
  }
  return out;
}

std::string FormatBound(const OptionSpec& spec, double bound) {
  if (spec.type == OptionType::kDuration) return std::to_string(static_cast<int64_t>(bound)) + " microseconds";
  if (spec.type != OptionType::kDouble) return std::to_string(static_cast<int64_t>(bound));
  std::ostringstream out;
  out << bound;
  return out.str();
}

std::optional<std::string> OutOfBounds(const OptionSpec& spec, double number) {
  if (spec.minimum && number < *spec.minimum) return "must be at least " + FormatBound(spec, *spec.minimum);
  if (spec.maximum && number > *spec.maximum) return "must be at most " + FormatBound(spec, *spec.maximum);
  return std::nullopt;
}

}  // namespace

Result<std::chrono::microseconds> ParseDuration(std::string_view text) {
  std::string why;
  std::optional<std::chrono::microseconds> duration = ParseDurationText(text, &why);
  if (!duration) return Status::Error(errors::kInvalidOptions, "'" + std::string(text) + "' " + why);
  return *duration;
}

bool IsSecretReference(std::string_view value) {
  if (!value.starts_with("${") || !value.ends_with("}")) return false;
  std::string_view inner = value.substr(2, value.size() - 3);
  if (inner.find('}') != std::string_view::npos || inner.find("${") != std::string_view::npos) return false;
  if (inner.starts_with("env:")) return inner.size() > 4;
  if (inner.starts_with("file:")) return inner.size() > 6 && inner[5] == '/';
  return false;
}

Result<ValidatedOptions> ValidateOptions(std::string_view component, std::span<const OptionSpec> specs,
                                         const std::map<std::string, std::string>& given,
                                         std::string_view error_class) {
  ValidatedOptions options;
  options.component_ = std::string(component);
  std::vector<std::string> problems;

  // Parses `value.text` as its spec's type; returns the reason when it does not parse or is out
  // of bounds.
  auto parse = [](ValidatedOptions::Value& value) -> std::optional<std::string> {
    std::string_view text = Trim(value.text);
    const OptionSpec& spec = *value.spec;
    switch (spec.type) {
      case OptionType::kString:
        if (spec.check != nullptr) {
          if (std::string problem = spec.check(value.text); !problem.empty()) return problem;
        }
        return std::nullopt;
      case OptionType::kSecret:
        return std::nullopt;
      case OptionType::kInt: {
        int32_t number = 0;
        if (!ParseNumber(text, &number)) return "must be an integer between -2147483648 and 2147483647";
        value.integer = number;
        return OutOfBounds(spec, static_cast<double>(value.integer));
      }
      case OptionType::kLong:
        if (!ParseNumber(text, &value.integer)) return "must be a 64-bit integer";
        return OutOfBounds(spec, static_cast<double>(value.integer));
      case OptionType::kDouble:
        if (!ParseNumber(text, &value.real) || !std::isfinite(value.real)) return "must be a finite number";
        return OutOfBounds(spec, value.real);
      case OptionType::kBool: {
        std::string lower = AsciiLower(text);
        if (lower != "true" && lower != "false") return "must be true or false";
        value.boolean = lower == "true";
        return std::nullopt;
      }
      case OptionType::kDuration: {
        std::string why;
        std::optional<std::chrono::microseconds> duration = ParseDurationText(text, &why);
        if (!duration) return why;
        value.duration = *duration;
        return OutOfBounds(spec, static_cast<double>(duration->count()));
      }
      case OptionType::kEnum:
        for (std::string_view allowed : spec.allowed_values) {
          if (AsciiLower(allowed) == AsciiLower(text)) {
            value.text = std::string(allowed);
            return std::nullopt;
          }
        }
        return "must be one of " + AllowedList(spec);
    }
    return "has an unknown option type";
  };

  std::vector<std::string> unknown;
  std::set<std::string> seen;
  for (const auto& [key, raw] : given) {
    std::string lower_key = AsciiLower(key);
    const OptionSpec* match = nullptr;
    for (const OptionSpec& spec : specs) {
      bool matches = IsFamily(spec) ? lower_key.size() > FamilyPrefix(spec).size() &&
                                          lower_key.starts_with(AsciiLower(FamilyPrefix(spec)))
                                    : lower_key == AsciiLower(spec.name);
      if (matches) {
        match = &spec;
        break;
      }
    }
    if (match == nullptr) {
      std::string problem = "unknown option '" + key + "'";
      if (std::optional<std::string_view> closest = ClosestName(key, specs)) {
        problem += " (did you mean '" + std::string(*closest) + "'?)";
      }
      unknown.push_back(std::move(problem));
      continue;
    }
    ValidatedOptions::Value value;
    value.spec = match;
    value.name = IsFamily(*match) ? key : std::string(match->name);
    value.given = true;
    if (!seen.insert(lower_key).second) {
      problems.push_back("option '" + value.name + "' is given more than once (names ignore case)");
      continue;
    }
    bool from_reference = false;
    SLUICE_ASSIGN_OR_RETURN(value.text, ResolveReferences(raw, value.name, component, &from_reference));
    if (match->type == OptionType::kSecret && !IsSecretReference(raw)) {
      // The value is never echoed: it may be the very secret that must not be stored.
      return Status::Error(errors::kConnectionLiteralSecret,
                           "option '" + value.name + "' of " + std::string(component) +
                               " must be a reference, ${env:NAME} or ${file:/absolute/path}, not the secret itself");
    }
    value.sensitive = from_reference || match->type == OptionType::kSecret;
    if (value.sensitive) RememberSensitiveValue(value.text);
    if (std::optional<std::string> reason = parse(value)) {
      problems.push_back("option '" + value.name + "' " + *reason + ", got " +
                         (value.sensitive ? std::string("a value from a secret reference") : "'" + raw + "'"));
      continue;
    }
    options.values_.emplace(std::move(lower_key), std::move(value));
  }

  for (const OptionSpec& spec : specs) {
    if (IsFamily(spec) || seen.contains(AsciiLower(spec.name))) continue;
    if (spec.required) {
      problems.push_back("missing required option '" + std::string(spec.name) + "' (" + std::string(spec.doc) + ")");
      continue;
    }
    if (!spec.default_value) continue;
    ValidatedOptions::Value value;
    value.spec = &spec;
    value.name = std::string(spec.name);
    value.text = std::string(*spec.default_value);
    value.sensitive = spec.type == OptionType::kSecret;
    if (std::optional<std::string> reason = parse(value)) {
      return Status::Error(errors::kInternalError, "the default of option '" + value.name + "' of " +
                                                       std::string(component) + " " + *reason);
    }
    options.values_.emplace(AsciiLower(spec.name), std::move(value));
  }

  problems.insert(problems.begin(), unknown.begin(), unknown.end());
  if (!problems.empty()) {
    std::string message = "invalid options for " + std::string(component) + ": ";
    for (size_t i = 0; i < problems.size(); ++i) message += (i == 0 ? "" : "; ") + problems[i];
    if (!unknown.empty()) message += ". Known options: " + KnownNames(specs);
    return Status::Error(error_class, std::move(message));
  }
  return options;
}

const ValidatedOptions::Value& ValidatedOptions::Find(std::string_view name,
                                                      std::initializer_list<OptionType> types) const {
  auto it = values_.find(AsciiLower(name));
  const char* problem = nullptr;
  if (it == values_.end()) {
    problem = "has no value and no default (check Has() first) or is not declared";
  } else if (std::find(types.begin(), types.end(), it->second.spec->type) == types.end()) {
    problem = "is read with a getter that does not match its declared type";
  } else {
    return it->second;
  }
  std::fprintf(stderr, "sluice: option '%.*s' of %s %s\n", static_cast<int>(name.size()), name.data(),
               component_.c_str(), problem);
  std::abort();
}

bool ValidatedOptions::Has(std::string_view name) const { return values_.contains(AsciiLower(name)); }

const std::string& ValidatedOptions::GetString(std::string_view name) const {
  return Find(name, {OptionType::kString, OptionType::kEnum}).text;
}

int64_t ValidatedOptions::GetInt64(std::string_view name) const {
  return Find(name, {OptionType::kInt, OptionType::kLong}).integer;
}

double ValidatedOptions::GetDouble(std::string_view name) const { return Find(name, {OptionType::kDouble}).real; }

bool ValidatedOptions::GetBool(std::string_view name) const { return Find(name, {OptionType::kBool}).boolean; }

std::chrono::microseconds ValidatedOptions::GetDuration(std::string_view name) const {
  return Find(name, {OptionType::kDuration}).duration;
}

const std::string& ValidatedOptions::GetSecret(std::string_view name) const {
  return Find(name, {OptionType::kSecret}).text;
}

bool ValidatedOptions::IsSensitive(std::string_view name) const {
  auto it = values_.find(AsciiLower(name));
  return it != values_.end() && it->second.sensitive;
}

std::map<std::string, std::string> ValidatedOptions::WithPrefix(std::string_view prefix) const {
  std::map<std::string, std::string> members;
  std::string lower_prefix = AsciiLower(prefix);
  for (const auto& [lower_name, value] : values_) {
    if (value.given && lower_name.size() > lower_prefix.size() && lower_name.starts_with(lower_prefix)) {
      members.emplace(value.name.substr(prefix.size()), value.text);
    }
  }
  return members;
}

std::string ValidatedOptions::Redacted() const {
  std::string out = "{";
  for (const auto& [lower_name, value] : values_) {
    if (!value.given) continue;
    if (out.size() > 1) out += ", ";
    out += value.name + "=" + (value.sensitive ? std::string(kMask) : value.text);
  }
  return out + "}";
}

}  // namespace sluice
