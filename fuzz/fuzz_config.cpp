// A --config file (CLI11's INI/TOML reader, as the long-running tools use
// it) for options of every kind the tools have: strings, numbers, sizes,
// durations checked by DurationFlag, lists and flags. tools::Parse must
// answer with an exit code or accept, never crash or hang.
#include "common.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cdc::fuzz::ScratchDir() + "/config.ini";
  cdc::fuzz::WriteFile(path, data, size);
  CLI::App app{"fuzz", "cdc-fuzz"};
  std::string dsn, slot, size_text;
  std::vector<std::string> tables;
  double delay = 10, interval = 10;
  int replicas = 1;
  size_t batch = 1000;
  bool quiet = false, follow = false;
  app.add_option("--dsn", dsn);
  app.add_option("--slot", slot);
  app.add_option("--table", tables)->delimiter(',');
  app.add_option("--segment-size", size_text);
  app.add_option("--commit-delay", delay)
      ->transform(cdc::tools::DurationFlag(0, false,
                                           cdc::tools::DurationUnit::kMillis));
  app.add_option("--metrics-interval", interval)
      ->transform(cdc::tools::DurationFlag(0, /*exclusive=*/true));
  app.add_option("--replicas", replicas)->check(CLI::Range(1, 5));
  app.add_option("--batch", batch)->check(CLI::Range(1, 1000000));
  app.add_flag("-q,--quiet", quiet);
  app.add_flag("-f,--follow", follow);
  app.set_config("--config", "", "config");
  app.allow_config_extras(false);
  std::string a0 = "cdc-fuzz", a1 = "--config", a2 = path;
  char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
  auto rc = cdc::tools::Parse(app, 3, argv);
  if (rc && *rc != 0 && *rc != 64 && *rc != 78) abort();
  if (!rc && !size_text.empty()) (void)cdc::tools::ParseSize(size_text);
  return 0;
}
