// Renderers: what a reader prints for each stored event (event.h), in one
// of the output formats that cdc-tail(1) documents.
//
//   native       the stored event with "seq" first and "last":true on the
//                final event of its source transaction (AppendNative)
//   debezium     the value Debezium's PostgreSQL connector emits through
//                JsonConverter with schemas.enable=false (debezium.h)
//   cloudevents  a CloudEvents 1.0 structured-mode JSON event whose "data"
//                is the native event (cloudevents.h)
//
// A renderer is fed every event of the log in seq order from where the
// read starts: those it should print through Append, those a filter leaves
// out through Skip, so that what a format counts within a source
// transaction (Debezium's total_order) counts them too. One renderer per
// reader; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::event {

enum class Format { kNative, kDebezium, kCloudEvents };

// "native", "debezium" or "cloudevents"; Usage error for anything else.
Result<Format> ParseFormat(std::string_view name);

// What a renderer knows of the log it reads (log.json). The source fields
// are empty for a log filled by `cdc-log import`.
struct SourceInfo {
  std::string log_id;
  std::string system_id;
  std::string database;
  std::string slot;
  std::string kind;  // "" (PostgreSQL) or "mariadb"
};

// Debezium's decimal.handling.mode, time.precision.mode and
// binary.handling.mode (cdc-tail(1), FORMATS (Debezium)).
enum class DecimalHandling { kPrecise, kDouble, kString };
enum class TimePrecision { kAdaptive, kAdaptiveTimeMicroseconds, kConnect };
enum class BinaryHandling { kBytes, kBase64, kHex };

struct RenderOptions {
  Format format = Format::kNative;
  // debezium: print {"key":K,"value":V} instead of the value alone.
  bool with_key = false;
  // debezium: source.name (Debezium's topic.prefix). Empty: the source
  // database's name, or "cdc" for a log without a source.
  std::string server_name;
  // debezium: the clock of the top-level ts_ms/ts_us/ts_ns, µs since the
  // Unix epoch (default cdc::NowMicros).
  std::function<int64_t()> clock;
  // debezium: how values of a column whose type a schema event told are
  // rendered; Debezium's defaults.
  DecimalHandling decimal_handling = DecimalHandling::kPrecise;
  TimePrecision time_precision = TimePrecision::kAdaptive;
  BinaryHandling binary_handling = BinaryHandling::kBytes;
  // debezium: every relation's schema event comes before its first change
  // (a log cdc-capture wrote; the renderer is told the earlier ones by
  // LearnSchema). A row change (c, u, d, r) of a relation no schema event
  // described is then damage (Corruption), never rendered untyped.
  bool schemas_required = false;
};

// The Debezium value modes by name, as the flags take them
// (--decimal-handling, --time-precision, --binary-handling); empty: the
// mode's default.
struct DebeziumModeNames {
  std::string decimal_handling, time_precision, binary_handling;
  bool any() const {
    return !decimal_handling.empty() || !time_precision.empty() ||
           !binary_handling.empty();
  }
};

// Sets `ro`'s value modes from their names. Usage for an unknown name, or
// for a mode named while `ro->format` is not debezium.
Status ApplyDebeziumModes(const DebeziumModeNames& n, RenderOptions* ro);

class Renderer {
 public:
  virtual ~Renderer() = default;

  // Says whether the next event fed is the first of its source
  // transaction. A new renderer assumes it is not (a read that starts at a
  // SEQ may start mid-transaction), so Debezium's "transaction" block of
  // that first, partial transaction is null; call Restart(true) when the
  // read starts at a transaction boundary (earliest, lsn:, time:, or right
  // after an event with "last").
  virtual void Restart(bool at_transaction_start) = 0;

  // Appends the output for one event, each line ending in '\n'; nothing
  // for an event the format does not show (schema changes in debezium).
  // Corruption when `stored` is not a stored event this renderer can read;
  // `out` is then as it was.
  virtual Status Append(uint64_t seq, std::string_view stored, bool last,
                        std::string* out) = 0;

  // An event the caller leaves out of the output.
  virtual Status Skip(uint64_t seq, std::string_view stored, bool last) = 0;

  // A schema event (op s) from before where reading starts (the log's
  // schema file, log/schemas.h): what the relation's columns are, for a
  // format whose values depend on their types. Not an event of the
  // output, nor counted in any transaction.
  virtual void LearnSchema(std::string_view stored) { (void)stored; }
};

std::unique_ptr<Renderer> MakeRenderer(const RenderOptions& options,
                                       const SourceInfo& source);

}  // namespace cdc::event
