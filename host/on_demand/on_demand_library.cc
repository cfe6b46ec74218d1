#include "host/on_demand/on_demand_library.h"

#include <dlfcn.h>

#include <stdexcept>

#include "host/common/log_text.h"

namespace planb {

void* OnDemandLibrary::Symbol(const char* name) {
  std::call_once(opened_, [this] {
    // RTLD_LOCAL: its symbols are reached through this handle only, as they would not be had it been linked.
    handle_ = ::dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      open_error_ = why == nullptr ? "unknown error" : why;
    }
  });
  if (handle_ == nullptr) {
    throw std::runtime_error("cannot open " + std::string(soname_) + ", needed for " + needed_for_ + ": " +
                             LogValue(open_error_) + " (install the package that holds it)");
  }
  void* symbol = ::dlsym(handle_, name);
  if (symbol == nullptr) {
    throw std::runtime_error(std::string(soname_) + " has no function " + name + ", needed for " + needed_for_ +
                             ": it is not the version planb was built with");
  }
  return symbol;
}

}  // namespace planb
