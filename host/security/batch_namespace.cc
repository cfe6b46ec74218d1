#include "host/security/batch_namespace.h"

#include <zmq.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "host/security/curve_key.h"

namespace planb {

std::string BatchNamespace(std::string_view z85_public_key) {
  if (!IsValidZ85Key(z85_public_key)) return "";
  const std::string text(z85_public_key);
  uint8_t key[32];
  if (zmq_z85_decode(key, text.c_str()) == nullptr) return "";
  std::string out = "key-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", key[i]);
    out += hex;
  }
  return out + "/";
}

}  // namespace planb
