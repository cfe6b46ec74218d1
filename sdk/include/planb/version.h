// The SDK's version as preprocessor macros, so that one plugin source builds against several minors of the same
// major: `#if PLANB_SDK_VERSION_AT_LEAST(7, 10)` around the use of a helper that arrived in 7.10 (each helper's
// comment says "Since SDK 7.N"). planb/plugin.h's kAbiMajor / kAbiMinor are these numbers; the CMake package
// (find_package(PlanB 7.N)) carries the same version. Plain C preprocessor, so C sources may include it too.
#pragma once

#define PLANB_SDK_VERSION_MAJOR 7
#define PLANB_SDK_VERSION_MINOR 11

// True when the SDK being built against is MAJOR.MINOR or a later minor of the same major (a new major breaks the
// ABI, so nothing written for one is promised for the next).
#define PLANB_SDK_VERSION_AT_LEAST(major, minor) \
  (PLANB_SDK_VERSION_MAJOR == (major) && PLANB_SDK_VERSION_MINOR >= (minor))
