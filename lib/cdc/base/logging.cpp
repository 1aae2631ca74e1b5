#include "cdc/base/logging.h"

#include <errno.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace cdc {

namespace {

void DefaultSink(LogLevel level, std::string_view message) {
  WriteLogLine(program_invocation_short_name, level, message);
}

std::atomic<LogSink> g_sink{DefaultSink};

}  // namespace

void SetLogSink(LogSink sink) {
  g_sink.store(sink != nullptr ? sink : DefaultSink);
}

void Log(LogLevel level, std::string_view message) {
  g_sink.load()(level, message);
}

void WriteLogLine(std::string_view prog, LogLevel level,
                  std::string_view message) {
  std::string line(prog);
  line += level == LogLevel::kWarning ? ": warning: " : ": ";
  line += message;
  line += '\n';
  // A failed write to stderr has nowhere to be reported.
  (void)!::write(2, line.data(), line.size());
}

}  // namespace cdc
