#include "host/commands/lookup_wire.h"

#include "planb/encoding.h"

namespace planb {
namespace {

constexpr char kMagic[] = "PLW1";
constexpr size_t kMagicSize = 4;
constexpr uint8_t kSessionFlag = 1;
constexpr uint8_t kNumberKeysFlag = 2;

class WireWriter final : public LookupWriter {
 public:
  WireWriter(LookupShape shape, std::ostream& out) : shape_(shape), out_(out) {
    uint8_t header[kMagicSize + 1 + 8];
    std::copy(kMagic, kMagic + kMagicSize, header);
    header[kMagicSize] = static_cast<uint8_t>((shape_.session ? kSessionFlag : 0) |
                                              (shape_.number_keys ? kNumberKeysFlag : 0));
    PutU64(header + kMagicSize + 1, shape_.batches);
    Write(header, sizeof(header));
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
  }
  void Missing(const std::string&, int64_t) override {
    const uint8_t absent = 0;
    Write(&absent, 1);
  }
  void Finish() override { out_.flush(); }

 private:
  void Write(const uint8_t* data, size_t size) {
    out_.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const LookupShape shape_;
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
  if ((flags & ~(kSessionFlag | kNumberKeysFlag)) != 0) return fail("unknown flags " + std::to_string(flags));
  out->session = (flags & kSessionFlag) != 0;
  out->number_keys = (flags & kNumberKeysFlag) != 0;
  out->batches = GetU64(p + kMagicSize + 1);
  p += kMagicSize + 1 + 8;
  left -= kMagicSize + 1 + 8;
  out->answers.clear();
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
    }
    out->answers.push_back(answer);
  }
  if (left != 0) return fail(std::to_string(left) + " bytes after the last answer");
  return Status::Ok();
}

}  // namespace planb
