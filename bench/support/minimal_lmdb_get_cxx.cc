// process_start_bench's floor for any C++ program: minimal_lmdb_get.c built as C++ and linked with libstdc++
// (iostreams initialised, as in any program that uses them). What it costs over the C program is the price of
// mapping and relocating libstdc++, which planb and every plugin need; no C++ program starts faster.
#include <iostream>

#define main minimal_c_main
#include "minimal_lmdb_get.c"
#undef main

int main(int argc, char** argv) {
  std::ios_base::sync_with_stdio(true);  // a use of libstdc++, so that --as-needed keeps it
  return minimal_c_main(argc, argv);
}
