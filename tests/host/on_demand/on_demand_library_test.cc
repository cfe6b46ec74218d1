#include "host/on_demand/on_demand_library.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace planb {
namespace {

std::string ErrorOf(OnDemandLibrary& library, const char* symbol) {
  try {
    library.Symbol(symbol);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(OnDemandLibrary, OpensTheLibraryAtTheFirstCallAndFindsItsFunctions) {
  OnDemandLibrary libm("libm.so.6", "the test");
  const auto cosine = reinterpret_cast<double (*)(double)>(libm.Symbol("cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  const auto square_root = reinterpret_cast<double (*)(double)>(libm.Symbol("sqrt"));
  EXPECT_DOUBLE_EQ(square_root(6.25), 2.5);
}

TEST(OnDemandLibrary, ALibraryThatIsNotThereIsAnErrorNamingItAndWhatNeedsIt) {
  OnDemandLibrary missing("libplanb-no-such-library.so.9", "the test's imaginary feature");
  for (int attempt = 0; attempt < 2; ++attempt) {  // and stays one: the same answer every call
    const std::string error = ErrorOf(missing, "anything");
    EXPECT_NE(error.find("cannot open libplanb-no-such-library.so.9"), std::string::npos) << error;
    EXPECT_NE(error.find("needed for the test's imaginary feature"), std::string::npos) << error;
    EXPECT_NE(error.find("install the package"), std::string::npos) << error;
  }
}

TEST(OnDemandLibrary, AFunctionTheLibraryLacksIsAnErrorNamingIt) {
  OnDemandLibrary libm("libm.so.6", "the test");
  const std::string error = ErrorOf(libm, "planb_no_such_function");
  EXPECT_NE(error.find("libm.so.6 has no function planb_no_such_function, needed for the test"), std::string::npos)
      << error;
  EXPECT_NE(libm.Symbol("cos"), nullptr);  // the library itself stays usable
}

}  // namespace
}  // namespace planb
