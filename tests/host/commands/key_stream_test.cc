// KeyStream (key_stream.h): keys from a pipe in batches as they arrive, with the lines rules of --keys-from.
#include "host/commands/key_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace planb {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class Pipe {
 public:
  Pipe() { EXPECT_EQ(::pipe(fds_), 0); }
  ~Pipe() {
    CloseWriter();
    ::close(fds_[0]);
  }
  int reader() const { return fds_[0]; }
  void Write(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fds_[1], text.data() + done, text.size() - done);
      ASSERT_GT(n, 0);
      done += static_cast<size_t>(n);
    }
  }
  void CloseWriter() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(KeyStream, ABatchEndsWhenNothingMoreWaitsToBeRead) {
  Pipe pipe;
  KeyStream stream(pipe.reader(), "standard input");
  pipe.Write("a\r\n\nb\n");
  std::vector<std::string> keys, sources;
  bool end = true;
  ASSERT_TRUE(stream.Next(&keys, &sources, &end).ok());  // returns although the writer is still open
  EXPECT_FALSE(end);
  EXPECT_THAT(keys, ElementsAre("a", "b"));
  EXPECT_THAT(sources, ElementsAre("--keys-from standard input line 1", "--keys-from standard input line 3"));
  keys.clear();
  pipe.Write("c");  // no newline yet: not a key until the line ends or the stream does
  std::thread closer([&pipe] { pipe.CloseWriter(); });
  ASSERT_TRUE(stream.Next(&keys, nullptr, &end).ok());
  closer.join();
  EXPECT_THAT(keys, ElementsAre("c"));
  EXPECT_TRUE(end);
}

TEST(KeyStream, BatchesAreBoundedByKeysAndBytes) {
  Pipe pipe;
  KeyStream stream(pipe.reader(), "standard input");
  std::thread writer([&pipe] {
    std::string text;
    for (size_t i = 0; i < KeyStream::kMaxKeys + 5; ++i) text += "k" + std::to_string(i) + "\n";
    pipe.Write(text);
    pipe.CloseWriter();
  });
  std::vector<std::string> keys;
  bool end = false;
  size_t total = 0, batches = 0;
  while (!end) {
    keys.clear();
    ASSERT_TRUE(stream.Next(&keys, nullptr, &end).ok());
    EXPECT_LE(keys.size(), KeyStream::kMaxKeys);
    total += keys.size();
    ++batches;
  }
  writer.join();
  EXPECT_EQ(total, KeyStream::kMaxKeys + 5);
  EXPECT_GE(batches, 2u);
}

TEST(KeyStream, AnOverlongLineIsAnErrorNamingIt) {
  Pipe pipe;
  KeyStream stream(pipe.reader(), "standard input");
  std::thread writer([&pipe] {
    pipe.Write("ok\n" + std::string(KeyStream::kMaxKeySize + 70000, 'x'));
    pipe.CloseWriter();
  });
  std::vector<std::string> keys;
  bool end = false;
  Status s = stream.Next(&keys, nullptr, &end);
  while (s.ok() && !end) s = stream.Next(&keys, nullptr, &end);
  writer.join();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--keys-from standard input line 2: a key of more than 1048576 bytes"));
}

TEST(KeyStream, AnEmptyStreamEndsWithNoKeys) {
  Pipe pipe;
  pipe.CloseWriter();
  KeyStream stream(pipe.reader(), "standard input");
  std::vector<std::string> keys;
  bool end = false;
  ASSERT_TRUE(stream.Next(&keys, nullptr, &end).ok());
  EXPECT_TRUE(end);
  EXPECT_TRUE(keys.empty());
}

}  // namespace
}  // namespace planb
