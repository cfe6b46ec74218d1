#include "host/commands/lookup_answers.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "planb/encoding.h"

namespace planb {
namespace {

constexpr char kMagic[] = "PLA1";
constexpr size_t kMagicSize = 4;
constexpr size_t kHeaderSize = kMagicSize + 1 + 8 + 1;
constexpr uint8_t kNoDataFlag = 1;
constexpr size_t kMaxOwnFields = 64;

void Write(std::ostream& out, const uint8_t* data, size_t size) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void WriteHeader(std::ostream& out, uint8_t flags, uint64_t batches, const std::vector<OwnFieldSlot>& own) {
  uint8_t header[kHeaderSize];
  std::copy(kMagic, kMagic + kMagicSize, header);
  header[kMagicSize] = flags;
  PutU64(header + kMagicSize + 1, batches);
  header[kHeaderSize - 1] = static_cast<uint8_t>(own.size());
  Write(out, header, sizeof(header));
  for (const OwnFieldSlot& f : own) {
    const uint8_t slot[2] = {f.position, static_cast<uint8_t>(f.kind)};
    Write(out, slot, 2);
  }
}

class AnswersWriter final : public LookupWriter {
 public:
  AnswersWriter(const LookupShape& shape, std::ostream& out) : out_(out) {
    const PluginDescriptor& type = *shape.type;
    for (uint32_t i = 0; i < type.field_count && own_.size() < kMaxOwnFields; ++i) {
      if (type.fields[i].field == RowField::kOwn) own_.push_back({static_cast<uint8_t>(i), type.fields[i].kind});
    }
    WriteHeader(out_, 0, shape.batches, own_);
  }
  void Found(const std::string&, int64_t, const Row& row) override {
    uint8_t head[1 + 1 + 4];
    head[0] = 1;
    head[1] = static_cast<uint8_t>(row.value_type);
    PutU32(head + 2, static_cast<uint32_t>(row.value.size));
    Write(out_, head, sizeof(head));
    Write(out_, row.value.data, row.value.size);
    uint8_t bounds[16];
    PutU64(bounds, static_cast<uint64_t>(row.session_start_ms));
    PutU64(bounds + 8, static_cast<uint64_t>(row.session_end_ms));
    Write(out_, bounds, sizeof(bounds));
    for (const OwnFieldSlot& f : own_) {
      WriteField(f.kind, f.position < row.own_field_count ? row.own_fields[f.position] : FieldValue());
    }
  }
  void Missing(const std::string&, int64_t) override {
    const uint8_t absent = 0;
    Write(out_, &absent, 1);
  }
  bool Refuse(const std::string&, int64_t, Code code, std::string_view message) override {
    const size_t size = std::min(message.size(), kMaxRefusal);
    uint8_t head[1 + 1 + 2];
    head[0] = 2;
    head[1] = static_cast<uint8_t>(code);
    PutU16(head + 2, static_cast<uint16_t>(size));
    Write(out_, head, sizeof(head));
    Write(out_, reinterpret_cast<const uint8_t*>(message.data()), size);
    return true;
  }
  void Finish() override { out_.flush(); }

 private:
  void WriteField(FieldKind kind, const FieldValue& v) {
    uint8_t bytes[8];
    switch (kind) {
      case FieldKind::kText:
        PutU32(bytes, static_cast<uint32_t>(v.text.size));
        Write(out_, bytes, 4);
        Write(out_, v.text.data, v.text.size);
        return;
      case FieldKind::kNumber:
      case FieldKind::kDate:
      case FieldKind::kAddress:
        PutU64(bytes, static_cast<uint64_t>(v.number));
        Write(out_, bytes, 8);
        return;
      case FieldKind::kDouble: {
        uint64_t bits = 0;
        std::memcpy(&bits, &v.real, 8);
        PutU64(bytes, bits);
        Write(out_, bytes, 8);
        return;
      }
      case FieldKind::kBool:
        bytes[0] = v.flag ? 1 : 0;
        Write(out_, bytes, 1);
        return;
    }
  }

  std::ostream& out_;
  std::vector<OwnFieldSlot> own_;
};

// Reads the answer bytes front to back; every take checks what is left first.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : p_(reinterpret_cast<const uint8_t*>(bytes.data())), left_(bytes.size()) {}
  size_t left() const { return left_; }
  bool U8(uint8_t* v) { return Take(1, [&](const uint8_t* p) { *v = p[0]; }); }
  bool U16(uint16_t* v) { return Take(2, [&](const uint8_t* p) { *v = GetU16(p); }); }
  bool U32(uint32_t* v) { return Take(4, [&](const uint8_t* p) { *v = GetU32(p); }); }
  bool U64(uint64_t* v) { return Take(8, [&](const uint8_t* p) { *v = GetU64(p); }); }
  bool Bytes(size_t size, std::string_view* v) {
    return Take(size, [&](const uint8_t* p) { *v = std::string_view(reinterpret_cast<const char*>(p), size); });
  }

 private:
  template <typename F>
  bool Take(size_t size, F&& read) {
    if (left_ < size) return false;
    read(p_);
    p_ += size;
    left_ -= size;
    return true;
  }
  const uint8_t* p_;
  size_t left_;
};

bool ReadField(Cursor& in, FieldKind kind, FieldValue* v) {
  uint64_t bits = 0;
  switch (kind) {
    case FieldKind::kText: {
      uint32_t size = 0;
      std::string_view text;
      if (!in.U32(&size) || !in.Bytes(size, &text)) return false;
      v->text = Bytes(text);
      return true;
    }
    case FieldKind::kNumber:
    case FieldKind::kDate:
    case FieldKind::kAddress:
      if (!in.U64(&bits)) return false;
      v->number = static_cast<int64_t>(bits);
      return true;
    case FieldKind::kDouble:
      if (!in.U64(&bits)) return false;
      std::memcpy(&v->real, &bits, 8);
      return true;
    case FieldKind::kBool: {
      uint8_t flag = 0;
      if (!in.U8(&flag) || flag > 1) return false;
      v->flag = flag == 1;
      return true;
    }
  }
  return false;
}

}  // namespace

std::unique_ptr<LookupWriter> CreateAnswersWriter(LookupShape shape, std::ostream& out) {
  return std::make_unique<AnswersWriter>(shape, out);
}

void WriteNoDataAnswers(std::ostream& out) {
  WriteHeader(out, kNoDataFlag, 0, {});
  out.flush();
}

Status DecodeLookupAnswers(std::string_view bytes, size_t keys, LookupAnswers* out) {
  const auto fail = [&](const std::string& what) {
    return Status(Code::kCorruption,
                  "lookup answers (READ format 6, " + std::to_string(bytes.size()) + " bytes): " + what);
  };
  out->no_data = false;
  out->batches = 0;
  out->own.clear();
  out->fields.clear();
  out->answers.clear();
  Cursor in(bytes);
  std::string_view magic;
  uint8_t flags = 0, own_count = 0;
  if (!in.Bytes(kMagicSize, &magic) || magic != std::string_view(kMagic, kMagicSize) || !in.U8(&flags) ||
      !in.U64(&out->batches) || !in.U8(&own_count)) {
    return fail("does not start with its header");
  }
  if ((flags & ~kNoDataFlag) != 0) return fail("unknown flags " + std::to_string(flags));
  if (own_count > kMaxOwnFields) return fail(std::to_string(own_count) + " own fields (at most 64)");
  for (size_t i = 0; i < own_count; ++i) {
    uint8_t position = 0, kind = 0;
    if (!in.U8(&position) || !in.U8(&kind)) return fail("ends inside own field " + std::to_string(i + 1));
    if (kind < 1 || kind > 6) return fail("own field " + std::to_string(i + 1) + " has kind " + std::to_string(kind));
    if (i > 0 && position <= out->own.back().position) {
      return fail("own field " + std::to_string(i + 1) + "'s position " + std::to_string(position) +
                  " does not follow the one before");
    }
    out->own.push_back({position, static_cast<FieldKind>(kind)});
  }
  out->no_data = (flags & kNoDataFlag) != 0;
  if (out->no_data) {
    if (own_count != 0 || in.left() != 0) return fail("says no data but carries more");
    return Status::Ok();
  }
  // Each answer takes at least a byte: a count the bytes cannot hold is refused before anything is reserved.
  if (in.left() < keys) return fail(std::to_string(in.left()) + " bytes left for " + std::to_string(keys) + " answers");
  out->answers.resize(keys);
  for (size_t i = 0; i < keys; ++i) {
    const auto which = [i] { return "answer " + std::to_string(i + 1); };  // made only for a message
    LookupAnswer& a = out->answers[i];
    a = LookupAnswer();
    uint8_t marker = 0;
    if (!in.U8(&marker)) return fail("ends at " + which() + " of " + std::to_string(keys));
    if (marker > 2) return fail(which() + " has marker " + std::to_string(marker));
    a.kind = static_cast<LookupAnswer::Kind>(marker);
    if (a.kind == LookupAnswer::Kind::kRefused) {
      uint8_t code = 0;
      uint16_t size = 0;
      if (!in.U8(&code) || !in.U16(&size) || !in.Bytes(size, &a.message)) {
        return fail(which() + " ends inside its refusal");
      }
      if (code < 2 || code > 9 || size > kMaxRefusal) {
        return fail(which() + " is a refusal with code " + std::to_string(code) + " and " + std::to_string(size) +
                    " bytes of message");
      }
      a.code = static_cast<Code>(code);
      continue;
    }
    if (a.kind == LookupAnswer::Kind::kAbsent) continue;
    uint8_t value_type = 0;
    uint32_t size = 0;
    uint64_t start = 0, end = 0;
    if (!in.U8(&value_type) || !in.U32(&size)) return fail(which() + " ends inside its head");
    if (value_type < 1 || value_type > 3) return fail(which() + " has value type " + std::to_string(value_type));
    if (!in.Bytes(size, &a.value)) {
      return fail(which() + " holds " + std::to_string(size) + " bytes, " + std::to_string(in.left()) + " remain");
    }
    if (!in.U64(&start) || !in.U64(&end)) return fail(which() + " ends inside its session bounds");
    a.value_type = static_cast<ValueType>(value_type);
    a.start_ms = static_cast<int64_t>(start);
    a.end_ms = static_cast<int64_t>(end);
    a.first_field = out->fields.size();
    for (const OwnFieldSlot& f : out->own) {
      FieldValue v;
      if (!ReadField(in, f.kind, &v)) {
        return fail(which() + "'s field at position " + std::to_string(f.position) + " is malformed or cut short");
      }
      out->fields.push_back(v);
    }
  }
  if (in.left() != 0) return fail(std::to_string(in.left()) + " bytes after the last answer");
  return Status::Ok();
}

}  // namespace planb
