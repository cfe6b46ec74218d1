#include "host/common/log_text.h"

#include <algorithm>

namespace planb {

std::string LogValue(std::string_view value, size_t cap) {
  static const char kHex[] = "0123456789abcdef";
  const std::string_view shown = value.substr(0, cap);
  std::string out;
  out.reserve(shown.size() + 16);
  for (unsigned char c : shown) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  if (value.size() > cap) out += "...(" + std::to_string(value.size()) + " bytes)";
  return out;
}

bool RepeatLimiter::Admit(const std::string& kind, Clock::time_point now, uint64_t* suppressed) {
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) {
    if (kinds_.size() >= max_kinds_) {
      auto oldest = std::min_element(kinds_.begin(), kinds_.end(),
                                     [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
      kinds_.erase(oldest);
    }
    kinds_.emplace(kind, Entry{now, 0});
    *suppressed = 0;
    return true;
  }
  if (now - it->second.last < period_) {
    ++it->second.suppressed;
    return false;
  }
  *suppressed = it->second.suppressed;
  it->second = Entry{now, 0};
  return true;
}

}  // namespace planb
