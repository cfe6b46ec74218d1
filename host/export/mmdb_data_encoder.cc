#include "host/export/mmdb_data_encoder.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace planb {
namespace {

// libmaxminddb refuses data nested deeper than 512 levels (MAXIMUM_DATA_STRUCTURE_DEPTH).
constexpr size_t kMaxDepth = 512;

void AppendBigEndian(unsigned __int128 value, size_t bytes, std::string* out) {
  for (size_t i = bytes; i > 0; --i) out->push_back(static_cast<char>(static_cast<uint8_t>(value >> (8 * (i - 1)))));
}

size_t SignificantBytes(unsigned __int128 value) {
  size_t n = 0;
  while (value != 0) {
    ++n;
    value >>= 8;
  }
  return n;
}

std::string_view TrimJsonSpace(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

class JsonEncoder {
 public:
  Status Value(simdjson::ondemand::value value, std::string* out) {
    simdjson::ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) return Fail("is not valid JSON");
    switch (type) {
      case simdjson::ondemand::json_type::object:
        return Object(value, out);
      case simdjson::ondemand::json_type::array:
        return Array(value, out);
      case simdjson::ondemand::json_type::string: {
        std::string_view text;
        if (value.get_string().get(text) != simdjson::SUCCESS) return Fail("is not a valid JSON string");
        if (!AppendMmdbString(text, out)) return Fail("is a string longer than a MaxMind DB holds");
        return Status::Ok();
      }
      case simdjson::ondemand::json_type::number: {
        return Number(TrimJsonSpace(value.raw_json_token()), out);
      }
      case simdjson::ondemand::json_type::boolean: {
        bool b = false;
        if (value.get_bool().get(b) != simdjson::SUCCESS) return Fail("is not valid JSON");
        AppendMmdbControl(MmdbType::kBoolean, b ? 1 : 0, out);
        return Status::Ok();
      }
      case simdjson::ondemand::json_type::null:
        return Fail("is null, which a MaxMind DB cannot hold (leave the member out)");
    }
    return Fail("is not valid JSON");
  }

 private:
  Status Object(simdjson::ondemand::value value, std::string* out) {
    if (path_.size() >= kMaxDepth) return Fail("nests deeper than a MaxMind DB reader takes (512)");
    simdjson::ondemand::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return Fail("is not a valid JSON object");
    std::string body;  // entries first: the map's control byte needs their count
    uint32_t count = 0;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Fail("has a member name that is not valid");
      if (++count > kMmdbMaxSize) return Fail("has more members than a MaxMind DB map holds");
      path_.emplace_back(key);
      if (!AppendMmdbString(key, &body)) return Fail("is a member name longer than a MaxMind DB holds");
      simdjson::ondemand::value member;
      if (field.value().get(member) != simdjson::SUCCESS) return Fail("is not valid JSON");
      PLANB_RETURN_IF_ERROR(Value(member, &body));
      path_.pop_back();
    }
    AppendMmdbControl(MmdbType::kMap, count, out);
    out->append(body);
    return Status::Ok();
  }

  Status Array(simdjson::ondemand::value value, std::string* out) {
    if (path_.size() >= kMaxDepth) return Fail("nests deeper than a MaxMind DB reader takes (512)");
    simdjson::ondemand::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return Fail("is not a valid JSON array");
    std::string body;
    uint32_t count = 0;
    for (auto element : array) {
      if (count >= kMmdbMaxSize) return Fail("has more elements than a MaxMind DB array holds");
      path_.push_back("[" + std::to_string(count++) + "]");
      simdjson::ondemand::value item;
      if (element.get(item) != simdjson::SUCCESS) return Fail("is not valid JSON");
      PLANB_RETURN_IF_ERROR(Value(item, &body));
      path_.pop_back();
    }
    AppendMmdbControl(MmdbType::kArray, count, out);
    out->append(body);
    return Status::Ok();
  }

  // The number's text decides its type, so that what an .mmdb import wrote as a double (always with a '.' or an
  // exponent) is a double again and its integers are integers.
  Status Number(std::string_view text, std::string* out) {
    if (text.find_first_of(".eE") != std::string_view::npos) {
      double d = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(d)) {
        return Fail("is the number " + std::string(text) + ", beyond a double's range");
      }
      AppendMmdbDouble(d, out);
      return Status::Ok();
    }
    if (!text.empty() && text.front() == '-') {
      int64_t n = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size() || n < std::numeric_limits<int32_t>::min()) {
        return Fail("is the integer " + std::string(text) +
                    ", below -2147483648: a MaxMind DB's one signed type is int32 (write it as a double, e.g. " +
                    std::string(text) + ".0)");
      }
      // int32 takes 4 bytes when negative: readers sign-extend only a full-width value.
      AppendMmdbControl(MmdbType::kInt32, 4, out);
      AppendBigEndian(static_cast<uint32_t>(static_cast<int32_t>(n)), 4, out);
      return Status::Ok();
    }
    unsigned __int128 value = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return Fail("is not a valid JSON number");
      const unsigned __int128 limit = ~static_cast<unsigned __int128>(0);
      if (value > (limit - static_cast<unsigned>(c - '0')) / 10) {
        return Fail("is the integer " + std::string(text) + ", beyond uint128, the widest MaxMind DB integer");
      }
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    const MmdbType type = value <= 0xFFFF           ? MmdbType::kUint16
                          : value <= 0xFFFFFFFF     ? MmdbType::kUint32
                          : value <= UINT64_MAX     ? MmdbType::kUint64
                                                    : MmdbType::kUint128;
    AppendMmdbUnsigned(type, value, out);
    return Status::Ok();
  }

  Status Fail(const std::string& what) const {
    std::string where;
    for (const std::string& part : path_) {
      if (!where.empty() && part.front() != '[') where.push_back('.');
      where.append(part);
    }
    return Status::Invalid((where.empty() ? std::string("the value") : "member " + where) + " " + what);
  }

  std::vector<std::string> path_;
};

}  // namespace

void AppendMmdbControl(MmdbType type, uint32_t size, std::string* out) {
  const uint8_t code = static_cast<uint8_t>(type);
  const uint8_t type_bits = code <= 7 ? static_cast<uint8_t>(code << 5) : 0;  // 0: the type is in the next byte
  uint8_t size_bits = 0;
  size_t extra = 0;
  uint32_t rest = 0;
  if (size < 29) {
    size_bits = static_cast<uint8_t>(size);
  } else if (size < 29 + 256) {
    size_bits = 29;
    extra = 1;
    rest = size - 29;
  } else if (size < 285 + 65536) {
    size_bits = 30;
    extra = 2;
    rest = size - 285;
  } else {
    size_bits = 31;
    extra = 3;
    rest = size - 65821;
  }
  out->push_back(static_cast<char>(type_bits | size_bits));
  if (code > 7) out->push_back(static_cast<char>(code - 7));
  AppendBigEndian(rest, extra, out);
}

bool AppendMmdbString(std::string_view text, std::string* out) {
  if (text.size() > kMmdbMaxSize) return false;
  AppendMmdbControl(MmdbType::kUtf8String, static_cast<uint32_t>(text.size()), out);
  out->append(text);
  return true;
}

void AppendMmdbUnsigned(MmdbType type, unsigned __int128 value, std::string* out) {
  const size_t bytes = SignificantBytes(value);  // 0 holds nothing: the value is 0
  AppendMmdbControl(type, static_cast<uint32_t>(bytes), out);
  AppendBigEndian(value, bytes, out);
}

void AppendMmdbDouble(double value, std::string* out) {
  AppendMmdbControl(MmdbType::kDouble, 8, out);
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  AppendBigEndian(bits, 8, out);
}

Status AppendMmdbJson(std::string_view json, std::string* out) {
  // Wrapped in an array: simdjson's on-demand API walks values inside a document, and a record may be a scalar.
  simdjson::padded_string padded(std::string("[") + std::string(json) + "]");
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  simdjson::ondemand::array outer;
  if (parser.iterate(padded).get(document) != simdjson::SUCCESS || document.get_array().get(outer) != simdjson::SUCCESS) {
    return Status::Invalid("the value is not valid JSON");
  }
  JsonEncoder encoder;
  size_t values = 0;
  for (auto element : outer) {
    simdjson::ondemand::value value;
    if (++values > 1 || element.get(value) != simdjson::SUCCESS) return Status::Invalid("the value is not one JSON value");
    PLANB_RETURN_IF_ERROR(encoder.Value(value, out));
  }
  if (values != 1) return Status::Invalid("the value is not one JSON value");
  return Status::Ok();
}

Status AppendMmdbText(std::string_view text, std::string* out) {
  if (!simdjson::validate_utf8(text.data(), text.size())) {
    return Status::Invalid("the value is text that is not UTF-8, and MaxMind DB strings are UTF-8");
  }
  if (!AppendMmdbString(text, out)) return Status::Invalid("the value is longer than a MaxMind DB string holds");
  return Status::Ok();
}

}  // namespace planb
