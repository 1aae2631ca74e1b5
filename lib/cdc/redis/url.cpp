#include "cdc/redis/url.h"

#include <charconv>

namespace cdc::redis {

namespace {

constexpr const char* kForms =
    " (use redis://[user@]host[:port][/db] or unix:///path[?db=N])";

Status Bad(std::string_view url, const std::string& why) {
  return Status::Usage("invalid Redis URL \"" + std::string(url) +
                       "\": " + why + kForms);
}

// A decimal integer in [lo, hi], nothing else.
bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo ||
      v > hi)
    return false;
  *out = v;
  return true;
}

}  // namespace

std::string Endpoint::Describe() const {
  std::string who = user.empty() ? "" : user + "@";
  if (is_unix()) return "unix:" + who + unix_path + "?db=" + std::to_string(db);
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return who + h + ":" + std::to_string(port) + "/" + std::to_string(db);
}

Result<Endpoint> ParseUrl(std::string_view url) {
  Endpoint e;
  constexpr std::string_view kRedis = "redis://", kUnix = "unix://";
  if (url.rfind("rediss://", 0) == 0)
    return Bad(url, "TLS (rediss://) is not supported");
  if (url.rfind(kUnix, 0) == 0) {
    std::string_view rest = url.substr(kUnix.size());
    size_t q = rest.find('?');
    std::string_view path = rest.substr(0, q);
    if (path.empty() || path[0] != '/')
      return Bad(url, "a unix socket needs an absolute path (unix:///path)");
    e.unix_path = std::string(path);
    if (q != std::string_view::npos) {
      std::string_view query = rest.substr(q + 1);
      if (query.rfind("db=", 0) != 0 ||
          !ParseInt(query.substr(3), 0, 1 << 30, &e.db))
        return Bad(url, "the only query parameter is db=N (N >= 0)");
    }
    return e;
  }
  if (url.rfind(kRedis, 0) != 0) return Bad(url, "unknown scheme");
  std::string_view rest = url.substr(kRedis.size());
  size_t slash = rest.find('/');
  std::string_view auth_host = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseInt(db, 0, 1 << 30, &e.db))
      return Bad(url, "the database must be a number >= 0 after the '/'");
  }
  if (auth_host.find('?') != std::string_view::npos)
    return Bad(url, "redis:// URLs take no query parameters");
  size_t at = auth_host.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view user = auth_host.substr(0, at);
    if (user.find(':') != std::string_view::npos)
      return Status::Usage(
          "the Redis URL must not hold a password (it would show in ps): "
          "give it in REDISCLI_AUTH or --password-file");
    if (user.empty()) return Bad(url, "empty user before '@'");
    e.user = std::string(user);
    auth_host = auth_host.substr(at + 1);
  }
  std::string_view port;
  if (!auth_host.empty() && auth_host[0] == '[') {
    size_t close = auth_host.find(']');
    if (close == std::string_view::npos)
      return Bad(url, "unterminated '[' in an IPv6 address");
    e.host = std::string(auth_host.substr(1, close - 1));
    std::string_view after = auth_host.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Bad(url, "junk after ']'");
      port = after.substr(1);
      if (port.empty()) return Bad(url, "empty port after ':'");
    }
  } else {
    size_t colon = auth_host.find(':');
    e.host = std::string(auth_host.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = auth_host.substr(colon + 1);
      if (port.empty()) return Bad(url, "empty port after ':'");
    }
  }
  if (e.host.empty()) return Bad(url, "no host");
  if (!port.empty() && !ParseInt(port, 1, 65535, &e.port))
    return Bad(url, "the port must be a number from 1 to 65535");
  return e;
}

}  // namespace cdc::redis
