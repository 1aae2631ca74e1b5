#include "cdc/cli/notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace cdc::cli {

Notifier::Notifier() {
  const char* p = getenv("NOTIFY_SOCKET");
  if (p == nullptr || (p[0] != '/' && p[0] != '@')) return;
  path_ = p;
  if (path_.size() >= sizeof(sockaddr_un::sun_path)) return;
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  const char* w = getenv("WATCHDOG_USEC");
  if (w != nullptr) watchdog_us_ = atoll(w);
}

Notifier::~Notifier() {
  if (fd_ >= 0) ::close(fd_);
}

void Notifier::Send(const std::string& msg) {
  if (fd_ < 0) return;
  sockaddr_un addr;
  std::memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract socket
  socklen_t len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size());
  // Best effort, as sd_notify: a lost datagram must not stop the service.
  (void)::sendto(fd_, msg.data(), msg.size(), MSG_NOSIGNAL,
                 reinterpret_cast<sockaddr*>(&addr), len);
}

void Notifier::MaybePingWatchdog(int64_t now) {
  if (fd_ < 0 || watchdog_us_ <= 0) return;
  if (now - last_ping_ < watchdog_us_ / 2) return;
  last_ping_ = now;
  Send("WATCHDOG=1");
}

}  // namespace cdc::cli
