// The library never prints: what it has to say beside its results
// (progress notes, warnings) goes through one process-wide hook that the
// program installs with its own name (cli::InstallLogging), so a message
// from shared code run by cdc-redis says "cdc-redis:", not "cdc-capture:".
// Errors are not logged: they travel as Status to the caller.
#pragma once

#include <string_view>

namespace cdc {

enum class LogLevel { kInfo, kWarning };

// Receives each message (one line, no program name, no newline).
using LogSink = void (*)(LogLevel level, std::string_view message);

// Replaces the sink; nullptr restores the default, which writes
// "PROG: message" ("PROG: warning: message" for warnings) to stderr, PROG
// being the executable's name. Install at start-up, before other threads
// log; Log() itself may be called from any thread (the sink must allow
// that: the default writes each line with one write(2)).
void SetLogSink(LogSink sink);

void Log(LogLevel level, std::string_view message);
inline void LogInfo(std::string_view message) { Log(LogLevel::kInfo, message); }
inline void LogWarning(std::string_view message) {
  Log(LogLevel::kWarning, message);
}

// Writes "prog: [warning: ]message\n" to stderr in one write(2): what the
// default sink does, for sinks that only change the name or the text.
void WriteLogLine(std::string_view prog, LogLevel level,
                  std::string_view message);

}  // namespace cdc
