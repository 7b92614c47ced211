#include "sluice/core/status.h"

#include <cstdio>
#include <cstdlib>

#include "sluice/core/sensitive_values.h"

namespace sluice {

Status Status::Error(std::string_view error_class, std::string message) {
  Status s;
  s.state_ = std::make_shared<const State>(State{std::string(error_class), ScrubSensitiveValues(std::move(message))});
  return s;
}

std::string_view Status::error_class() const { return ok() ? std::string_view() : state_->error_class; }

std::string_view Status::message() const { return ok() ? std::string_view() : state_->message; }

std::string Status::ToString() const {
  if (ok()) return "OK";
  return state_->error_class + ": " + state_->message;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Error(state_->error_class, std::string(context) + ": " + state_->message);
}

bool Status::operator==(const Status& other) const {
  return error_class() == other.error_class() && message() == other.message();
}

void AbortOnBadResultAccess(const Status& status) {
  std::fprintf(stderr, "sluice: value of a failed Result accessed: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace sluice
