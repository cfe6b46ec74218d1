// Error codes and the two ways errors travel:
//  - across the plugin boundary: a Code return value plus a message written into a host-owned ErrorBuffer;
//  - inside one module: planb::Status (OK costs nothing; an error carries code + message).
// A miss is not an error: lookups return Code::kNotFound and build no message.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <utility>

namespace planb {

enum class Code : int32_t {
  kOk = 0,
  kNotFound = 1,
  kInvalidArgument = 2,  // bad input: a record, a key, an option
  kCorruption = 3,       // stored bytes that do not decode
  kIOError = 4,
  kNotSupported = 5,
  kFull = 6,             // map or disk full
  kInternal = 7,
  // Since SDK 7.1.
  kPermissionDenied = 8, // the host's: a storage node refused a client (key not listed, right or map not allowed)
  // Since SDK 7.7.
  kNoData = 9,           // the host's: a map with no data on this node (nothing merged into it, or another home)
};

inline const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk: return "ok";
    case Code::kNotFound: return "not found";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kCorruption: return "corruption";
    case Code::kIOError: return "I/O error";
    case Code::kNotSupported: return "not supported";
    case Code::kFull: return "full";
    case Code::kInternal: return "internal error";
    case Code::kPermissionDenied: return "permission denied";
    case Code::kNoData: return "no data";
  }
  return "unknown error";
}

// Host-owned buffer a plugin writes its message into when a call fails.
struct ErrorBuffer {
  static constexpr size_t kCapacity = 1024;
  char message[kCapacity] = {0};
};

// Writes a printf-style message into `error` (may be null) and returns `code`: `return Fail(e, ...)`.
inline Code Fail(ErrorBuffer* error, Code code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
inline Code Fail(ErrorBuffer* error, Code code, const char* format, ...) {
  if (error != nullptr) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(error->message, ErrorBuffer::kCapacity, format, args);
    va_end(args);
  }
  return code;
}

// Runs `body` (returning Code) and turns any exception into kInternal, so none crosses the plugin boundary.
template <typename Body>
Code Guard(ErrorBuffer* error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(error, Code::kFull, "out of memory");
  } catch (const std::exception& e) {
    return Fail(error, Code::kInternal, "%s", e.what());
  } catch (...) {
    return Fail(error, Code::kInternal, "unknown exception");
  }
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : rep_(code == Code::kOk ? nullptr : new Rep{code, std::move(message)}) {}
  Status(const Status& o) : rep_(o.rep_ ? new Rep(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    rep_.reset(o.rep_ ? new Rep(*o.rep_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }
  static Status Invalid(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
  static Status IOError(std::string m) { return Status(Code::kIOError, std::move(m)); }
  static Status NotSupported(std::string m) { return Status(Code::kNotSupported, std::move(m)); }
  static Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }
  // Since SDK 7.1.
  static Status PermissionDenied(std::string m) { return Status(Code::kPermissionDenied, std::move(m)); }
  // The status of a plugin call that returned `code` and wrote its message into `error`.
  static Status FromPlugin(Code code, const ErrorBuffer& error) {
    return Status(code, error.message[0] != '\0' ? std::string(error.message) : CodeName(code));
  }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  const std::string& message() const {
    static const std::string kEmpty;
    return rep_ ? rep_->message : kEmpty;
  }
  // A copy with `context: ` in front of the message (e.g. the file or map it concerns).
  Status WithContext(const std::string& context) const {
    return ok() ? Status() : Status(code(), context + ": " + message());
  }

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

}  // namespace planb

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define PLANB_RETURN_IF_ERROR(expr)               \
  do {                                            \
    ::planb::Status planb_status_ = (expr);       \
    if (!planb_status_.ok()) return planb_status_; \
  } while (0)
