// LineSource: lines split across reads, the buffer growing for a long line, a line past the bound, the last line
// without a newline, and no line handed out before it is complete.
#include "host/common/line_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace planb {
namespace {

// Hands out `text` a few bytes per read, as a slow pipe does.
class TrickleSource final : public ByteSource {
 public:
  TrickleSource(std::string text, size_t step) : text_(std::move(text)), step_(step) {}
  Status Read(char* buffer, size_t size, size_t* got) override {
    *got = std::min({size, step_, text_.size() - at_});
    text_.copy(buffer, *got, at_);
    at_ += *got;
    return Status::Ok();
  }

 private:
  std::string text_;
  size_t step_;
  size_t at_ = 0;
};

std::vector<std::string> AllLines(ByteSource& source, size_t batch, size_t max_line, Status* status) {
  LineSource lines(source, "in", 32, max_line);
  std::vector<std::string> out;
  std::vector<std::string_view> got;
  uint64_t expected_first = 1;
  for (;;) {
    *status = lines.Next(batch, &got);
    if (!status->ok() || got.empty()) return out;
    EXPECT_EQ(lines.first_line(), expected_first);
    EXPECT_LE(got.size(), batch);
    for (std::string_view line : got) {
      EXPECT_GE(line.data() + line.size() + 32, line.data());  // padding follows (checked by ASan in CI)
      out.emplace_back(line);
    }
    expected_first += got.size();
  }
}

TEST(LineSource, SplitsLinesWhateverTheReadSizes) {
  const std::string text = "a\n\nbb\r\n" + std::string(3000000, 'x') + "\nlast";
  for (size_t step : {size_t{1}, size_t{7}, size_t{1} << 20, size_t{8} << 20}) {
    TrickleSource source(text, step);
    Status s;
    const std::vector<std::string> lines = AllLines(source, 2, size_t{64} << 20, &s);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(lines.size(), 5u) << step;
    EXPECT_EQ(lines[0], "a");
    EXPECT_EQ(lines[1], "");
    EXPECT_EQ(lines[2], "bb\r");  // the '\r' is the line's: JSON reads it as white space
    EXPECT_EQ(lines[3].size(), 3000000u);
    EXPECT_EQ(lines[4], "last");
  }
}

TEST(LineSource, RefusesALineLongerThanTheBoundNamingIt) {
  TrickleSource source("ok\n" + std::string(5u << 20, 'y') + "\n", 1u << 20);
  Status s;
  const std::vector<std::string> lines = AllLines(source, 10, size_t{4} << 20, &s);
  EXPECT_EQ(lines, std::vector<std::string>{"ok"});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "in:2: line longer than 4 MiB");
}

TEST(LineSource, EmptyInputHasNoLines) {
  TrickleSource source("", 1);
  Status s;
  EXPECT_TRUE(AllLines(source, 10, 1 << 20, &s).empty());
  EXPECT_TRUE(s.ok());
}

}  // namespace
}  // namespace planb
