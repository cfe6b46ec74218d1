// A shared library opened the first time one of its functions is called, not when planb starts (issue 42,
// docs/performance.md "Process start"). ZeroMQ, libzip, libmicrohttpd, libsystemd and libmaxminddb bring 35 more
// libraries with them (GnuTLS, Kerberos, OpenSSL's libcrypto, ...); mapping and relocating them cost a local
// `planb lookup` 9 of its 10 ms. The *_on_demand.cc files beside this one define each function the host calls,
// with the signature of the library's own header, as a forward to the function found here, so the code that
// uses these libraries is unchanged and a command that needs none of them never loads them.
// Thread-safety: Symbol may be called from any thread; the library is opened once.
#pragma once

#include <mutex>
#include <string>

namespace planb {

class OnDemandLibrary {
 public:
  // `soname` as the dynamic loader looks it up (the system's library path, as for a linked library);
  // `needed_for` says in an error what could not run without it.
  OnDemandLibrary(const char* soname, const char* needed_for) : soname_(soname), needed_for_(needed_for) {}
  OnDemandLibrary(const OnDemandLibrary&) = delete;
  OnDemandLibrary& operator=(const OnDemandLibrary&) = delete;

  // The address of `name` in the library, opening it first if it is not open yet. Throws std::runtime_error
  // naming the library, the function and what it is needed for when the library cannot be opened or lacks
  // the function: the callers are planb's own C++ code, whose commands turn exceptions into exit status 2.
  void* Symbol(const char* name);

  const char* soname() const { return soname_; }

 private:
  const char* soname_;
  const char* needed_for_;
  std::once_flag opened_;
  void* handle_ = nullptr;
  std::string open_error_;
};

}  // namespace planb

// Defines `name` (declared by the library's header, so a signature that does not match it does not compile)
// as a call through the function `library()` finds. `params` and `args` are parenthesised lists.
#define PLANB_ON_DEMAND(library, ret, name, params, args)                                              \
  extern "C" ret name params {                                                                          \
    static const auto real = reinterpret_cast<decltype(&::name)>(library().Symbol(#name));              \
    return real args;                                                                                   \
  }
