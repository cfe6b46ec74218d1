// Symbol visibility for plugins: they build with -fvisibility=hidden, so only what is marked here leaves the .so.
#pragma once

#define PLANB_EXPORT __attribute__((visibility("default")))
