// Command-line entry points of the tools. Each returns the process exit
// code (docs/design.md, "Errors and exit codes") instead of calling exit(),
// so tests can run it in-process.
#pragma once

namespace cdc::tail {
int RunCli(int argc, char** argv);
}
namespace cdc::ack {
int RunCli(int argc, char** argv);
}
namespace cdc::logtool {
int RunCli(int argc, char** argv);
}
namespace cdc::capture {
int RunCli(int argc, char** argv);
}
namespace cdc::redis_tool {
int RunCli(int argc, char** argv);
}
namespace cdc::backup_tool {
int RunCli(int argc, char** argv);
}
namespace cdc::nats_tool {
int RunCli(int argc, char** argv);
}
namespace cdc::run_tool {
int RunCli(int argc, char** argv);
}
namespace cdc::pg_tool {
int RunCli(int argc, char** argv);
}
