// Incremental SHA-256 (OpenSSL EVP), hex output.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(std::string_view data);
  // Lowercase hex digest of everything updated since construction or Reset.
  std::string HexDigest();
  void Reset();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// SHA-256 of a whole file, in hex.
Result<std::string> Sha256File(const std::string& path);

}  // namespace cdc
