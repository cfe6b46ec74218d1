// Symbol visibility for plugins: they build with -fvisibility=hidden, so only what is marked here leaves the .so.
// Since SDK 7.0 (all of this header unless noted).
#pragma once

#define PLANB_EXPORT __attribute__((visibility("default")))
