#include "host/security/curve_key.h"

#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace planb {
namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

}  // namespace

Status RequireCurve() {
  if (zmq_has("curve") != 1) {
    return Status::NotSupported(
        "this libzmq was built without CURVE (libsodium); install one that has it (Debian's libzmq5 does)");
  }
  return Status::Ok();
}

std::string Z85KeyProblem(std::string_view key) {
  if (key.size() != kZ85KeyLength) {
    return "is " + std::to_string(key.size()) + " characters, not a Z85 key of 40";
  }
  for (size_t i = 0; i < key.size(); ++i) {
    if (kZ85Alphabet.find(key[i]) == std::string_view::npos) {
      return "has a character outside the Z85 alphabet at position " + std::to_string(i + 1);
    }
  }
  // Each 5 characters encode 4 bytes; 85^5 > 2^32, so some valid-looking groups overflow.
  char text[kZ85KeyLength + 1];
  std::memcpy(text, key.data(), kZ85KeyLength);
  text[kZ85KeyLength] = '\0';
  uint8_t bytes[32];
  if (zmq_z85_decode(bytes, text) == nullptr) return "is not valid Z85 (a group encodes more than 32 bits)";
  return "";
}

bool IsValidZ85Key(std::string_view key) { return Z85KeyProblem(key).empty(); }

Status GenerateKeyPair(CurveKeyPair* pair) {
  PLANB_RETURN_IF_ERROR(RequireCurve());
  char public_key[kZ85KeyLength + 1] = {};
  char secret_key[kZ85KeyLength + 1] = {};
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return Status::Internal(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
  }
  pair->public_key = public_key;
  pair->secret_key = secret_key;
  std::memset(secret_key, 0, sizeof secret_key);
  return Status::Ok();
}

Status DerivePublicKey(std::string_view secret_key, std::string* public_key) {
  PLANB_RETURN_IF_ERROR(RequireCurve());
  if (!IsValidZ85Key(secret_key)) return Status::Invalid("the secret key " + Z85KeyProblem(secret_key));
  char secret[kZ85KeyLength + 1];
  std::memcpy(secret, secret_key.data(), kZ85KeyLength);
  secret[kZ85KeyLength] = '\0';
  char derived[kZ85KeyLength + 1] = {};
  const int rc = zmq_curve_public(derived, secret);
  std::memset(secret, 0, sizeof secret);
  if (rc != 0) return Status::Internal(std::string("zmq_curve_public failed: ") + zmq_strerror(zmq_errno()));
  *public_key = derived;
  return Status::Ok();
}

}  // namespace planb
