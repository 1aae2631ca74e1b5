#include "cdc/base/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "cdc/base/fs.h"

namespace cdc {

struct Sha256::Ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) { Reset(); }
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Reset() { EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr); }

void Sha256::Update(std::string_view data) {
  EVP_DigestUpdate(ctx_->md, data.data(), data.size());
}

std::string Sha256::HexDigest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &n);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  Reset();
  return hex;
}

Result<std::string> Sha256File(const std::string& path) {
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenFile(path, O_RDONLY));
  Sha256 sha;
  std::string buf(1 << 20, '\0');
  for (;;) {
    ssize_t r = ::read(f.fd(), buf.data(), buf.size());
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path, errno);
    }
    if (r == 0) break;
    sha.Update(std::string_view(buf.data(), static_cast<size_t>(r)));
  }
  return sha.HexDigest();
}

}  // namespace cdc
