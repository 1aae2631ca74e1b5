// systemd's notification protocol (sd_notify) spoken directly over
// $NOTIFY_SOCKET, so Type=notify units work without libsystemd. Every call
// is a no-op when the variable is unset.
#pragma once

#include <cstdint>
#include <string>

namespace cdc::cli {

class Notifier {
 public:
  Notifier();  // reads NOTIFY_SOCKET and WATCHDOG_USEC
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  void Ready() { Send("READY=1"); }
  void Stopping() { Send("STOPPING=1"); }
  void SetStatus(const std::string& s) { Send("STATUS=" + s); }
  // Sends WATCHDOG=1 if a watchdog is configured and half its interval has
  // passed since the last ping.
  void MaybePingWatchdog(int64_t now_mono_us);
  bool enabled() const { return fd_ >= 0; }

 private:
  void Send(const std::string& msg);

  int fd_ = -1;
  std::string path_;
  int64_t watchdog_us_ = 0;
  int64_t last_ping_ = 0;
};

}  // namespace cdc::cli
