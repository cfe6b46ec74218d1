#include "host/commands/lookup_wire.h"

#include <algorithm>
#include <cstring>

#include "host/commands/row_formats.h"
#include "planb/encoding.h"

namespace planb {
namespace {

constexpr char kMagic[] = "PLW1";
constexpr size_t kMagicSize = 4;
constexpr uint8_t kSessionFlag = 1;
constexpr uint8_t kNumberKeysFlag = 2;
constexpr uint8_t kFieldsFlag = 4;
constexpr size_t kMaxShownFields = 64;
constexpr size_t kMaxNameSize = 64;

bool IsKind(uint8_t kind) { return kind >= 1 && kind <= 5; }

class WireWriter final : public LookupWriter {
 public:
  WireWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {
    uint8_t header[kMagicSize + 1 + 8];
    std::copy(kMagic, kMagic + kMagicSize, header);
    const bool fields = !shape_.shown.empty() && !shape_.session;
    header[kMagicSize] = static_cast<uint8_t>((shape_.session ? kSessionFlag : 0) |
                                              (shape_.number_keys ? kNumberKeysFlag : 0) | (fields ? kFieldsFlag : 0));
    PutU64(header + kMagicSize + 1, shape_.batches);
    Write(header, sizeof(header));
    if (!fields) return;
    const uint8_t count = static_cast<uint8_t>(std::min(shape_.shown.size(), kMaxShownFields));
    shape_.shown.resize(count);
    Write(&count, 1);
    for (const ShownField& f : shape_.shown) {
      const uint8_t size = static_cast<uint8_t>(std::min(f.name.size(), kMaxNameSize));
      const uint8_t meta[3] = {static_cast<uint8_t>(f.spec.kind), f.zero_when_absent ? uint8_t{1} : uint8_t{0},
                               size};
      Write(meta, 3);
      Write(reinterpret_cast<const uint8_t*>(f.name.data()), size);
    }
  }
  void Found(const std::string&, int64_t, const Row& row) override {
    uint8_t answer[1 + 16];
    answer[0] = 1;
    if (shape_.session) {
      PutU64(answer + 1, static_cast<uint64_t>(row.session_start_ms));
      PutU64(answer + 9, static_cast<uint64_t>(row.session_end_ms));
      Write(answer, 17);
      return;
    }
    PutU32(answer + 1, static_cast<uint32_t>(row.value.size));
    Write(answer, 5);
    Write(row.value.data, row.value.size);
    for (const ShownField& f : shape_.shown) WriteField(f.spec.kind, FieldValueOf(row, f.spec, f.index));
  }
  void Missing(const std::string&, int64_t) override {
    const uint8_t absent = 0;
    Write(&absent, 1);
  }
  void Finish() override { out_.flush(); }

 private:
  void WriteField(FieldKind kind, const FieldValue& v) {
    uint8_t bytes[8];
    switch (kind) {
      case FieldKind::kText:
        PutU32(bytes, static_cast<uint32_t>(v.text.size));
        Write(bytes, 4);
        Write(v.text.data, v.text.size);
        return;
      case FieldKind::kNumber:
      case FieldKind::kDate:
      case FieldKind::kAddress:  // never shown: lookup fields keep the plugin's kinds (KeyStart is a kNumber there)
        PutU64(bytes, static_cast<uint64_t>(v.number));
        Write(bytes, 8);
        return;
      case FieldKind::kDouble: {
        uint64_t bits = 0;
        std::memcpy(&bits, &v.real, 8);
        PutU64(bytes, bits);
        Write(bytes, 8);
        return;
      }
      case FieldKind::kBool:
        bytes[0] = v.flag ? 1 : 0;
        Write(bytes, 1);
        return;
    }
  }
  void Write(const uint8_t* data, size_t size) {
    out_.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  LookupShape shape_;
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<LookupWriter> CreateWireWriter(LookupShape shape, std::ostream& out) {
  return std::make_unique<WireWriter>(shape, out);
}

Status DecodeLookupWire(std::string_view bytes, size_t keys, WireAnswers* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t left = bytes.size();
  const auto fail = [&](const std::string& what) {
    return Status(Code::kCorruption, "lookup answer (--format wire, " + std::to_string(bytes.size()) +
                                         " bytes): " + what);
  };
  if (left < kMagicSize + 1 + 8 || bytes.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    return fail("does not start with its header");
  }
  const uint8_t flags = p[kMagicSize];
  if ((flags & ~(kSessionFlag | kNumberKeysFlag | kFieldsFlag)) != 0) {
    return fail("unknown flags " + std::to_string(flags));
  }
  out->session = (flags & kSessionFlag) != 0;
  out->number_keys = (flags & kNumberKeysFlag) != 0;
  if (out->session && (flags & kFieldsFlag) != 0) return fail("session answers cannot carry fields");
  out->batches = GetU64(p + kMagicSize + 1);
  p += kMagicSize + 1 + 8;
  left -= kMagicSize + 1 + 8;
  out->answers.clear();
  out->shown.clear();
  out->fields.clear();
  if ((flags & kFieldsFlag) != 0) {
    if (left < 1 || p[0] == 0 || p[0] > kMaxShownFields) return fail("no valid count of shown fields");
    const size_t count = p[0];
    ++p;
    --left;
    for (size_t i = 0; i < count; ++i) {
      const std::string which = "shown field " + std::to_string(i + 1);
      if (left < 3) return fail(which + " ends inside its header");
      const uint8_t kind = p[0], zero = p[1], size = p[2];
      if (!IsKind(kind) || zero > 1 || size == 0 || size > kMaxNameSize || left - 3 < size) {
        return fail(which + " is malformed (kind " + std::to_string(kind) + ", name of " + std::to_string(size) +
                    " bytes)");
      }
      ShownField f;
      f.name.assign(reinterpret_cast<const char*>(p + 3), size);
      for (char c : f.name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return fail(which + " has a bad name");
      }
      f.spec.kind = static_cast<FieldKind>(kind);
      f.spec.field = RowField::kOwn;
      f.index = static_cast<uint32_t>(i);
      f.zero_when_absent = zero == 1;
      out->shown.push_back(std::move(f));
      p += 3 + size;
      left -= 3 + size;
    }
  }
  // Each answer takes at least a byte: a count the bytes cannot hold is refused before anything is reserved.
  if (left < keys) return fail(std::to_string(left) + " bytes left for " + std::to_string(keys) + " answers");
  out->answers.reserve(keys);
  for (size_t i = 0; i < keys; ++i) {
    if (left < 1) return fail("ends at answer " + std::to_string(i + 1) + " of " + std::to_string(keys));
    const uint8_t found = *p++;
    --left;
    WireAnswer answer;
    if (found > 1) return fail("answer " + std::to_string(i + 1) + " has marker " + std::to_string(found));
    answer.found = found == 1;
    if (answer.found && out->session) {
      if (left < 16) return fail("answer " + std::to_string(i + 1) + " ends inside its session");
      answer.start_ms = static_cast<int64_t>(GetU64(p));
      answer.end_ms = static_cast<int64_t>(GetU64(p + 8));
      p += 16;
      left -= 16;
    } else if (answer.found) {
      if (left < 4) return fail("answer " + std::to_string(i + 1) + " ends inside its length");
      const uint32_t size = GetU32(p);
      p += 4;
      left -= 4;
      if (size > left) {
        return fail("answer " + std::to_string(i + 1) + " holds " + std::to_string(size) + " bytes, " +
                    std::to_string(left) + " remain");
      }
      answer.value = std::string_view(reinterpret_cast<const char*>(p), size);
      p += size;
      left -= size;
      answer.first_field = out->fields.size();
      for (const ShownField& f : out->shown) {
        FieldValue v;
        const auto which = [i, &f] { return "answer " + std::to_string(i + 1) + "'s field " + f.name; };
        if (f.spec.kind == FieldKind::kBool) {
          if (left < 1 || p[0] > 1) return fail(which() + " is not a boolean");
          v.flag = p[0] == 1;
          ++p;
          --left;
        } else if (f.spec.kind == FieldKind::kText) {
          if (left < 4 || GetU32(p) > left - 4) return fail(which() + " overruns the answer");
          const uint32_t text_size = GetU32(p);
          v.text = Bytes(p + 4, text_size);
          p += 4 + text_size;
          left -= 4 + text_size;
        } else {
          if (left < 8) return fail(which() + " ends early");
          const uint64_t bits = GetU64(p);
          if (f.spec.kind == FieldKind::kDouble) {
            std::memcpy(&v.real, &bits, 8);
          } else {
            v.number = static_cast<int64_t>(bits);
          }
          p += 8;
          left -= 8;
        }
        out->fields.push_back(v);
      }
    }
    out->answers.push_back(answer);
  }
  if (left != 0) return fail(std::to_string(left) + " bytes after the last answer");
  return Status::Ok();
}

}  // namespace planb
