// CURVE keys as Z85 text (ZeroMQ's encoding: 40 characters for 32 bytes) and their checks, over libzmq
// (built with libsodium). Below host/config: includes only the SDK and libzmq.
#pragma once

#include <string>
#include <string_view>

#include "planb/status.h"

namespace planb {

inline constexpr size_t kZ85KeyLength = 40;  // 32 bytes in Z85

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters; never logged
};

// What a client socket needs to talk CURVE to one server: the server's public key (the handshake fails unless
// the server proves it holds the matching secret) and the client's own pair.
struct CurveClientKeys {
  std::string server_public_key;  // Z85
  CurveKeyPair own;
};

// Whether libzmq can do CURVE (zmq_has("curve")); the error says how to get a libzmq that can.
Status RequireCurve();
// True when `key` is 40 characters of the Z85 alphabet that decode to 32 bytes (no 5-character group over
// 2^32 - 1).
bool IsValidZ85Key(std::string_view key);
// "" when valid, else why not (for messages; never echoes the key, which may be a secret).
std::string Z85KeyProblem(std::string_view key);
// A new key pair from libsodium's random source.
Status GenerateKeyPair(CurveKeyPair* pair);
// The public key of `secret_key` (valid Z85).
Status DerivePublicKey(std::string_view secret_key, std::string* public_key);

}  // namespace planb
