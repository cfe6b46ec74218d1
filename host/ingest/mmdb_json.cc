// The record's data list is flat and in pre-order: a map entry's data_size counts its key/value pairs, an array's
// its elements, and the entries inside follow it. Pointers in the file are already resolved by libmaxminddb.
#include "host/ingest/mmdb_json.h"

#include <simdjson.h>

#include <charconv>
#include <cstdint>
#include <string_view>

#include "host/common/json_text.h"

namespace planb {
namespace {

void AppendBase64(const uint8_t* bytes, size_t size, std::string* out) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->push_back('"');
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out->push_back(kAlphabet[v >> 18]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  if (size - i == 1) {
    const uint32_t v = uint32_t{bytes[i]} << 16;
    out->push_back(kAlphabet[v >> 18]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->append("==");
  } else if (size - i == 2) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8);
    out->push_back(kAlphabet[v >> 18]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back('=');
  }
  out->push_back('"');
}

// Shortest round-trip text (std::to_chars without a format), with ".0" added to an integral one so that a reader
// of the JSON still sees a floating-point number. NaN and infinities have no JSON form.
template <typename Real>
Status AppendReal(Real value, std::string* out) {
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, value);
  const std::string_view text(buffer, static_cast<size_t>(r.ptr - buffer));
  if (text.find_first_not_of("-0123456789.e+") != std::string_view::npos) {
    return Status::Corruption("a floating-point value that JSON cannot hold (" + std::string(text) + ")");
  }
  out->append(text);
  if (text.find_first_of(".e") == std::string_view::npos) out->append(".0");
  return Status::Ok();
}

void AppendUint128(unsigned __int128 value, std::string* out) {
  char digits[40];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(value % 10));
    value /= 10;
  } while (value != 0);
  while (n > 0) out->push_back(digits[--n]);
}

unsigned __int128 Uint128Of(const MMDB_entry_data_s& data) {
#if MMDB_UINT128_IS_BYTE_ARRAY
  unsigned __int128 v = 0;
  for (uint8_t b : data.uint128) v = (v << 8) | b;
  return v;
#else
  return data.uint128;
#endif
}

Status AppendString(const MMDB_entry_data_s& data, const char* what, std::string* out) {
  if (!simdjson::validate_utf8(data.utf8_string, data.data_size)) {
    return Status::Corruption(std::string(what) + " is not valid UTF-8");
  }
  AppendJsonString(std::string_view(data.utf8_string, data.data_size), out);
  return Status::Ok();
}

class Encoder {
 public:
  Encoder(const MmdbJsonLimits& limits, std::string* out) : limits_(limits), out_(out) {}

  Status Value(const MMDB_entry_data_list_s** list, size_t depth) {
    if (*list == nullptr) return Status::Corruption("a map or array ends early");
    const MMDB_entry_data_s& data = (*list)->entry_data;
    *list = (*list)->next;
    const bool container = data.type == MMDB_DATA_TYPE_MAP || data.type == MMDB_DATA_TYPE_ARRAY;
    if (container && depth > limits_.max_depth) {
      return Status::Invalid("the record nests maps and arrays deeper than the limit of " +
                             std::to_string(limits_.max_depth));
    }
    // A string or bytes can be large: refuse before copying, not after.
    const bool sized = data.type == MMDB_DATA_TYPE_UTF8_STRING || data.type == MMDB_DATA_TYPE_BYTES;
    if (sized && out_->size() + data.data_size > limits_.max_bytes) return TooLarge();
    switch (data.type) {
      case MMDB_DATA_TYPE_MAP:
        out_->push_back('{');
        for (uint32_t i = 0; i < data.data_size; ++i) {
          if (i > 0) out_->push_back(',');
          if (*list == nullptr) return Status::Corruption("a map ends early");
          const MMDB_entry_data_s& key = (*list)->entry_data;
          if (key.type != MMDB_DATA_TYPE_UTF8_STRING) return Status::Corruption("a map key is not a string");
          *list = (*list)->next;
          PLANB_RETURN_IF_ERROR(AppendString(key, "a map key", out_));
          out_->push_back(':');
          PLANB_RETURN_IF_ERROR(Value(list, depth + 1));
        }
        out_->push_back('}');
        break;
      case MMDB_DATA_TYPE_ARRAY:
        out_->push_back('[');
        for (uint32_t i = 0; i < data.data_size; ++i) {
          if (i > 0) out_->push_back(',');
          PLANB_RETURN_IF_ERROR(Value(list, depth + 1));
        }
        out_->push_back(']');
        break;
      case MMDB_DATA_TYPE_UTF8_STRING:
        PLANB_RETURN_IF_ERROR(AppendString(data, "a string", out_));
        break;
      case MMDB_DATA_TYPE_DOUBLE:
        PLANB_RETURN_IF_ERROR(AppendReal(data.double_value, out_));
        break;
      case MMDB_DATA_TYPE_FLOAT:
        PLANB_RETURN_IF_ERROR(AppendReal(data.float_value, out_));
        break;
      case MMDB_DATA_TYPE_BYTES:
        AppendBase64(data.bytes, data.data_size, out_);
        break;
      case MMDB_DATA_TYPE_UINT16:
        out_->append(std::to_string(data.uint16));
        break;
      case MMDB_DATA_TYPE_UINT32:
        out_->append(std::to_string(data.uint32));
        break;
      case MMDB_DATA_TYPE_INT32:
        out_->append(std::to_string(data.int32));
        break;
      case MMDB_DATA_TYPE_UINT64:
        out_->append(std::to_string(data.uint64));
        break;
      case MMDB_DATA_TYPE_UINT128:
        AppendUint128(Uint128Of(data), out_);
        break;
      case MMDB_DATA_TYPE_BOOLEAN:
        out_->append(data.boolean ? "true" : "false");
        break;
      default:  // pointers, containers and end markers never reach a decoded list
        return Status::Corruption("a value of unknown data type " + std::to_string(data.type));
    }
    return out_->size() > limits_.max_bytes ? TooLarge() : Status::Ok();
  }

 private:
  Status TooLarge() const {
    return Status::Invalid("the record's JSON is larger than the limit of " + std::to_string(limits_.max_bytes) +
                           " bytes");
  }

  const MmdbJsonLimits& limits_;
  std::string* out_;
};

}  // namespace

Status AppendMmdbJson(const MMDB_entry_data_list_s** list, const MmdbJsonLimits& limits, std::string* out) {
  return Encoder(limits, out).Value(list, 1);
}

}  // namespace planb
