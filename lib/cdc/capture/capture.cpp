#include "cdc/capture/capture.h"

#include "cdc/capture/engine.h"
#include "cdc/capture/mariadb_source.h"
#include "cdc/capture/pg_source.h"

namespace cdc::capture {

bool IsMariaDbDsn(std::string_view dsn) {
  return dsn.starts_with("mariadb://") || dsn.starts_with("mysql://");
}

Status Run(const Options& opts) {
  Engine engine(opts);
  return engine.Run(IsMariaDbDsn(opts.dsn) ? MakeMariaDbSource : MakePgSource);
}

}  // namespace cdc::capture
