// Status and Result<T>: how every failure a user or the outside world can cause is reported.
//
// A failed Status carries an error class (a stable upper-case name listed in docs/errors.md,
// such as "UNRESOLVED_COLUMN") and a message that says what to change. Error classes are part of
// the public contract: callers and scripts match on them, so they never change meaning. Messages
// are for people and may be reworded. Neither ever contains a secret value.
//
// Status and Result are values: cheap to move, safe to copy, not synchronized (like std::string).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sluice {

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  static Status OK() { return Status(); }
  // The message is scrubbed of sensitive values (core/sensitive_values.h).
  static Status Error(std::string_view error_class, std::string message);

  bool ok() const { return state_ == nullptr; }
  // Empty for an OK status.
  std::string_view error_class() const;
  std::string_view message() const;
  // "ERROR_CLASS: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `; the error class is kept.
  Status WithContext(std::string_view context) const;

  bool operator==(const Status& other) const;

 private:
  struct State {
    std::string error_class;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

// Either a value of T or a failed Status. Accessing the value of a failed Result aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Status::Error("INTERNAL_ERROR", "Result built from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  // A temporary's value is moved out, not referred to: `for (auto& x : Make().value())` then
  // iterates a value that lives as long as the loop, not one inside the destroyed Result.
  T value() && { return std::move(Checked()); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }
  T operator*() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }

  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  T& Checked();
  std::optional<T> value_;
  Status status_;
};

[[noreturn]] void AbortOnBadResultAccess(const Status& status);

template <typename T>
T& Result<T>::Checked() {
  if (!value_.has_value()) AbortOnBadResultAccess(status_);
  return *value_;
}

}  // namespace sluice

#define SLUICE_CONCAT_INNER(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_INNER(a, b)

#define SLUICE_RETURN_IF_ERROR(expr)                     \
  do {                                                   \
    ::sluice::Status sluice_status_ = (expr);            \
    if (!sluice_status_.ok()) return sluice_status_;     \
  } while (0)

#define SLUICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// SLUICE_ASSIGN_OR_RETURN(auto x, MakeX());
#define SLUICE_ASSIGN_OR_RETURN(lhs, rexpr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(sluice_result_, __LINE__), lhs, rexpr)
