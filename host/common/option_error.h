// The message of a Boost.Program_options error, made safely. Boost 1.74 builds what() by replacing each
// "%placeholder%" of its template with a value until none is left, so a value holding its own placeholder (a
// config line "%invalid_line%", an argument "--%canonical_option%", from a peer's READ too) never ends: what()
// loops forever, growing the message. Found by fuzz/fuzz_config and fuzz/fuzz_protocol.
#pragma once

#include <string>

#include <boost/program_options/errors.hpp>

namespace planb {

// e.what(), the same text, but the values' '%' cannot be read as placeholders. Never loops.
std::string OptionErrorText(const boost::program_options::error& e);

}  // namespace planb
