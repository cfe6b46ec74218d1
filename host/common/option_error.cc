#include "host/common/option_error.h"

#include <string_view>

namespace planb {
namespace {

namespace po = boost::program_options;

// Stands for '%' in the values while Boost substitutes them; a control byte no option or config value needs.
constexpr char kPercent = '\x01';

// A copy of the error (its template, style and values: all what() reads) whose values hold no '%'. Deriving is
// the way to reach the protected values; every error_with_option_name Boost throws keeps its text in them and
// in m_error_template, so the copy's what() is the original's.
class Defused : public po::error_with_option_name {
 public:
  explicit Defused(const po::error_with_option_name& e) : po::error_with_option_name(e) {
    for (auto& entry : m_substitutions) {
      for (char& c : entry.second) c = c == '%' ? kPercent : c;
    }
  }
};

}  // namespace

std::string OptionErrorText(const po::error& e) {
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  if (named == nullptr) return e.what();
  std::string text = Defused(*named).what();
  for (char& c : text) c = c == kPercent ? '%' : c;
  return text;
}

}  // namespace planb
