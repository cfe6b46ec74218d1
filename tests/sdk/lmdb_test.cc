// planb::Txn::OpenDbi (sdk/include/planb/lmdb.h): the main table by a null name, and each failure a Status that
// names the table, never a crash.
#include "planb/lmdb.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_env.h"

namespace planb {
namespace {

class OpenDbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Open(dir_.path(), Env::Options()).ok());
    Txn txn;
    ASSERT_TRUE(txn.Begin(env_.get(), 0).ok());
    MDB_dbi table = 0;
    ASSERT_TRUE(txn.OpenDbi("rows", MDB_CREATE, &table).ok());
    MDB_dbi main = 0;
    ASSERT_EQ(mdb_dbi_open(txn.get(), nullptr, 0, &main), MDB_SUCCESS);
    ASSERT_TRUE(txn.Put(main, Bytes(std::string("plain")), Bytes(std::string("not a table"))).ok());
    ASSERT_TRUE(txn.Commit().ok());
  }

  // OpenDbi of `name` in a read transaction of its own.
  Status OpenInReadTxn(const char* name) {
    Txn txn;
    Status s = txn.Begin(env_.get(), MDB_RDONLY);
    MDB_dbi dbi = 0;
    return s.ok() ? txn.OpenDbi(name, 0, &dbi) : s;
  }

  testing::TempDir dir_;
  Env env_;
};

TEST_F(OpenDbiTest, NullNameOpensTheMainTableListingTheNamedOnes) {
  Txn txn;
  ASSERT_TRUE(txn.Begin(env_.get(), MDB_RDONLY).ok());
  MDB_dbi main = 0;
  const Status s = txn.OpenDbi(nullptr, 0, &main);
  ASSERT_TRUE(s.ok()) << s.message();
  Cursor cursor;
  ASSERT_TRUE(cursor.Open(txn.get(), main).ok());
  std::vector<std::string> keys;
  Bytes key;
  Bytes value;
  for (bool got = cursor.Get(MDB_FIRST, &key, &value); got; got = cursor.Get(MDB_NEXT, &key, &value)) {
    keys.emplace_back(reinterpret_cast<const char*>(key.data), key.size);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"plain", "rows"}));
}

TEST_F(OpenDbiTest, AnAbsentTableIsNotFoundByName) {
  const Status s = OpenInReadTxn("absent");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "no table 'absent'");
}

TEST_F(OpenDbiTest, APlainKeyOfTheMainTableIsNotATable) {
  const Status s = OpenInReadTxn("plain");
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.message(), "table 'plain' is not a Plan B table");
}

TEST_F(OpenDbiTest, OutsideATransactionIsAnErrorNotACrash) {
  Txn never_begun;
  MDB_dbi dbi = 0;
  for (const char* name : {static_cast<const char*>(nullptr), "rows"}) {
    const Status s = never_begun.OpenDbi(name, 0, &dbi);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_EQ(s.message(), "opening a table outside a transaction");
  }
}

}  // namespace
}  // namespace planb
