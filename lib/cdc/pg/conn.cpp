#include "cdc/pg/conn.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "cdc/base/coding.h"
#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/pg/copy_raw.h"
#include "cdc/pg/replication.h"

namespace cdc::pg {

namespace {

// The server's notices and warnings (e.g. "terminating connection due to
// immediate shutdown" as it goes down) reach stderr through the program's
// log, with its name, as one line; libpq's default would print them bare.
void LogNotice(const std::string& severity, const std::string& message) {
  const std::string sev = severity.empty() ? "NOTICE" : severity;
  const bool warning =
      sev == "WARNING" || sev == "ERROR" || sev == "FATAL" || sev == "PANIC";
  Log(warning ? LogLevel::kWarning : LogLevel::kInfo,
      "PostgreSQL " + sev + ": " + OneLine(message.c_str()));
}

void ReceiveNotice(void*, const PGresult* r) {
  const char* sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (sev == nullptr) sev = PQresultErrorField(r, PG_DIAG_SEVERITY);
  const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  LogNotice(sev ? sev : "", primary ? primary : PQresultErrorMessage(r));
}

}  // namespace

PgResult& PgResult::operator=(PgResult&& o) noexcept {
  if (this != &o) {
    PQclear(r_);
    r_ = o.r_;
    o.r_ = nullptr;
  }
  return *this;
}
PgResult::~PgResult() { PQclear(r_); }
int PgResult::rows() const { return r_ ? PQntuples(r_) : 0; }
int PgResult::cols() const { return r_ ? PQnfields(r_) : 0; }
bool PgResult::is_null(int row, int col) const {
  if (row < 0 || row >= rows() || col < 0 || col >= cols()) return true;
  return PQgetisnull(r_, row, col) != 0;
}
std::string PgResult::get(int row, int col) const {
  if (row < 0 || row >= rows() || col < 0 || col >= cols()) return "";
  return std::string(PQgetvalue(r_, row, col),
                     static_cast<size_t>(PQgetlength(r_, row, col)));
}

namespace {
Status OddReply(std::string_view text, const std::string& what) {
  std::string shown(text.substr(0, 64));
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return Status::BadInput("unexpected reply from PostgreSQL: " + what +
                          " is \"" + shown + "\"" +
                          (text.size() > 64 ? "..." : ""));
}
}  // namespace

Result<uint32_t> ParseReplyUint32(std::string_view text,
                                  const std::string& what) {
  if (text.empty() || text.size() > 10) return OddReply(text, what);
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return OddReply(text, what);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return OddReply(text, what);
  return static_cast<uint32_t>(v);
}

Result<Lsn> ParseReplyLsn(std::string_view text, const std::string& what) {
  auto lsn = ParseLsn(text);
  if (!lsn.ok()) return OddReply(text, what);
  return *lsn;
}

namespace {
// libpq's test for a dbname that is itself a connection string.
bool IsConnectionString(const std::string& s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0 ||
         s.find('=') != std::string::npos;
}
}  // namespace

Result<bool> ConninfoHasPassword(const std::string& conninfo) {
  if (!IsConnectionString(conninfo)) return false;  // a database name
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    std::string msg = OneLine(err ? err : "out of memory");
    PQfreemem(err);
    // libpq quotes parts of the string; say nothing of it when it may hold
    // a password (a keyword like "password", or a URI with user:secret@).
    std::string lower;
    for (char c : conninfo)
      lower.push_back(
          static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const size_t at = lower.find('@');
    if (lower.find("pass") != std::string::npos ||
        lower.find('%') != std::string::npos ||
        (at != std::string::npos &&
         lower.find(':', lower.find("://") + 3) < at))
      msg = "libpq cannot parse it (not shown: it may hold a password)";
    return Status::Config("invalid --dsn: " + msg);
  }
  bool has = false;
  std::string nested;
  for (PQconninfoOption* o = opts; o->keyword; ++o) {
    if (o->val == nullptr) continue;
    if (std::strcmp(o->keyword, "password") == 0) has = true;
    if (std::strcmp(o->keyword, "dbname") == 0 && IsConnectionString(o->val))
      nested = o->val;
  }
  PQconninfoFree(opts);
  if (!has && !nested.empty() && nested != conninfo)
    return ConninfoHasPassword(nested);
  return has;
}

std::string RedactDsn(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    PQfreemem(err);
    return "(unparseable conninfo)";
  }
  std::string out;
  for (PQconninfoOption* o = opts; o->keyword; ++o) {
    if (o->val == nullptr) continue;
    if (!out.empty()) out += ' ';
    out += o->keyword;
    out += '=';
    out += std::strcmp(o->keyword, "password") == 0 ? "********" : o->val;
  }
  PQconninfoFree(opts);
  return out;
}

Result<std::unique_ptr<Connection>> Connection::Connect(
    const std::string& conninfo, bool replication, bool pin_search_path,
    const char* application_name) {
  char* err = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &err);
  if (parsed == nullptr) {
    std::string msg = OneLine(err ? err : "out of memory");
    PQfreemem(err);
    return Status::Config("invalid --dsn: " + msg);
  }
  PQconninfoFree(parsed);
  std::string settings =
      "-c DateStyle=ISO -c TimeZone=UTC -c IntervalStyle=postgres "
      "-c extra_float_digits=3 -c bytea_output=hex";
  // reg* types print their names qualified unless visible on the search
  // path: a role's own search_path must not change the text.
  if (pin_search_path) settings += " -c search_path=pg_catalog";
  // Defaults a DSN overrides (it is expanded after them): a connect that
  // gets no answer gives up after 10 s instead of waiting without limit;
  // TCP probes an idle connection after 30 s, declaring it dead after
  // three unanswered probes 10 s apart; and data sent but unacknowledged
  // for 30 s (a query or a batch into a blackhole, where keepalives never
  // start and retransmissions would go on for about 15 minutes) fails the
  // connection. A slow query is not cut: the server's TCP acknowledges
  // what it received whether or not it has answered.
  std::vector<const char*> keys = {
      "connect_timeout",  "keepalives_idle",  "keepalives_interval",
      "keepalives_count", "tcp_user_timeout", "dbname",
      "client_encoding",  "options",          "fallback_application_name"};
  std::vector<const char*> vals = {"10",
                                   "30",
                                   "10",
                                   "3",
                                   "30000",
                                   conninfo.c_str(),
                                   "UTF8",
                                   settings.c_str(),
                                   application_name};
  if (replication) {
    keys.push_back("replication");
    vals.push_back("database");
  }
  keys.push_back(nullptr);
  vals.push_back(nullptr);
  PGconn* c = PQconnectdbParams(keys.data(), vals.data(), /*expand=*/1);
  if (c == nullptr) return Status::Internal("libpq: out of memory");
  std::unique_ptr<Connection> conn(new Connection(c));
  PQsetNoticeReceiver(c, ReceiveNotice, nullptr);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = OneLine(PQerrorMessage(c));
    if (msg.find("password authentication failed") != std::string::npos ||
        msg.find("no pg_hba.conf entry") != std::string::npos ||
        msg.find("pg_hba.conf rejects connection") != std::string::npos ||
        msg.find("authentication failed") != std::string::npos ||
        msg.find("no password supplied") != std::string::npos ||
        msg.find("permission denied") != std::string::npos ||
        msg.find("must be superuser or replication role") != std::string::npos)
      return Status::Permission("cannot connect to PostgreSQL: " + msg);
    // A server that does not exist, or whose certificate this client
    // refuses (sslmode=verify-ca/verify-full): retrying cannot help.
    if (msg.find("does not exist") != std::string::npos ||
        msg.find("certificate verify failed") != std::string::npos ||
        msg.find("server certificate for") != std::string::npos ||
        msg.find("root certificate file") != std::string::npos ||
        msg.find("server does not support SSL") != std::string::npos)
      return Status::Config("cannot connect to PostgreSQL: " + msg);
    return Status::Unavailable("cannot connect to PostgreSQL: " + msg);
  }
  return conn;
}

Connection::~Connection() {
  FreeCopy();
  PQfinish(conn_);
}

void Connection::FreeCopy() {
  if (copy_ != nullptr) PQfreemem(copy_);
  copy_ = nullptr;
}

std::string Connection::ErrorMessage() const {
  return OneLine(PQerrorMessage(conn_));
}

Status Connection::Error(const std::string& what) const {
  std::string msg = what + ": " + ErrorMessage();
  if (PQstatus(conn_) != CONNECTION_OK) return Status::Unavailable(msg);
  if (msg.find("permission denied") != std::string::npos ||
      msg.find("must be superuser") != std::string::npos ||
      msg.find("must be owner") != std::string::npos)
    return Status::Permission(msg);
  return Status::Unavailable(msg);
}

Result<PgResult> Connection::Exec(const std::string& sql) {
  return ExecParams(sql, {});
}

Result<PgResult> Connection::ExecParams(
    const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  pg_result* raw =
      params.empty()
          ? PQexec(conn_, sql.c_str())
          : PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()),
                         nullptr, values.data(), nullptr, nullptr, 0);
  PgResult r(raw);
  ExecStatusType st = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
    std::string first = sql.substr(0, sql.find(' '));
    const char* code =
        raw ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
    return ClassifySqlState(code, Error(first + " failed"));
  }
  return r;
}

std::string Connection::QuoteIdent(const std::string& name) const {
  char* q = PQescapeIdentifier(conn_, name.c_str(), name.size());
  std::string out = q ? q : "\"\"";
  PQfreemem(q);
  return out;
}

std::string Connection::QuoteLiteral(const std::string& text) const {
  char* q = PQescapeLiteral(conn_, text.c_str(), text.size());
  std::string out = q ? q : "''";
  PQfreemem(q);
  return out;
}

Status Connection::EnterPipeline() {
  if (PQenterPipelineMode(conn_) != 1) return Error("pipeline mode");
  separator_ = false;
  return Status::OK();
}

Status Connection::ExitPipeline() {
  if (PQexitPipelineMode(conn_) != 1) return Error("pipeline mode");
  return Status::OK();
}

Status Connection::SendParams(const std::string& sql,
                              const std::vector<const char*>& values,
                              const std::vector<int>& lengths) {
  if (PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()),
                        nullptr, values.data(), lengths.data(), nullptr,
                        0) != 1)
    return Error("cannot send to PostgreSQL");
  return Status::OK();
}

Status Connection::SendPrepare(const std::string& name, const std::string& sql,
                               int params) {
  if (PQsendPrepare(conn_, name.c_str(), sql.c_str(), params, nullptr) != 1)
    return Error("cannot send to PostgreSQL");
  return Status::OK();
}

Status Connection::SendPrepared(const std::string& name,
                                const std::vector<const char*>& values,
                                const std::vector<int>& lengths) {
  if (PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                          values.data(), lengths.data(), nullptr, 0) != 1)
    return Error("cannot send to PostgreSQL");
  return Status::OK();
}

Status Connection::SendSync() {
  if (PQpipelineSync(conn_) != 1 || PQflush(conn_) != 0)
    return Error("cannot send to PostgreSQL");
  return Status::OK();
}

Result<std::optional<Connection::Answer>> Connection::NextAnswer(int wait_ms) {
  bool waited = false;
  for (;;) {
    if (PQisBusy(conn_)) {
      if (waited || wait_ms <= 0) {
        if (PQconsumeInput(conn_) == 0) return Error("PostgreSQL");
        if (PQisBusy(conn_)) return std::optional<Answer>();
        continue;
      }
      waited = true;
      struct pollfd p = {PQsocket(conn_), POLLIN, 0};
      int n = ::poll(&p, 1, wait_ms);
      if (n < 0 && errno != EINTR) return Error("poll");
      if (PQconsumeInput(conn_) == 0) return Error("PostgreSQL");
      continue;
    }
    pg_result* raw = PQgetResult(conn_);
    if (raw == nullptr) {
      if (!separator_) return std::optional<Answer>();
      separator_ = false;
      continue;
    }
    PgResult r(raw);
    Answer a;
    switch (PQresultStatus(raw)) {
      case PGRES_PIPELINE_SYNC:
        a.kind = Answer::kSync;
        return std::optional<Answer>(std::move(a));
      case PGRES_COMMAND_OK:
      case PGRES_TUPLES_OK:
        a.kind = Answer::kDone;
        break;
      case PGRES_PIPELINE_ABORTED:
        a.kind = Answer::kAborted;
        break;
      default: {
        a.kind = Answer::kError;
        const char* code = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
        a.sqlstate = code ? code : "";
        a.message = OneLine(PQresultErrorMessage(raw));
        if (PQstatus(conn_) != CONNECTION_OK)
          return Status::Unavailable("PostgreSQL: " + a.message);
      }
    }
    separator_ = true;
    return std::optional<Answer>(std::move(a));
  }
}

Result<SystemIdentity> Connection::IdentifySystem() {
  CDC_ASSIGN_OR_RETURN(PgResult r, ExecParams("IDENTIFY_SYSTEM", {}));
  if (r.rows() != 1) return Status::Unavailable("IDENTIFY_SYSTEM: no row");
  SystemIdentity id;
  id.system_id = r.get(0, 0);
  CDC_ASSIGN_OR_RETURN(
      id.timeline, ParseReplyUint32(r.get(0, 1), "IDENTIFY_SYSTEM timeline"));
  CDC_ASSIGN_OR_RETURN(id.xlogpos,
                       ParseReplyLsn(r.get(0, 2), "IDENTIFY_SYSTEM xlogpos"));
  id.dbname = r.is_null(0, 3) ? "" : r.get(0, 3);
  return id;
}

Status Connection::StartReplication(const std::string& slot, Lsn start,
                                    const std::string& publication) {
  std::string cmd =
      "START_REPLICATION SLOT " + QuoteIdent(slot) + " LOGICAL " +
      FormatLsn(start) + " (proto_version '1', publication_names " +
      QuoteLiteral(QuoteIdent(publication)) + ", messages 'true')";
  pg_result* raw = PQexec(conn_, cmd.c_str());
  PgResult r(raw);
  if (raw == nullptr || PQresultStatus(raw) != PGRES_COPY_BOTH) {
    const char* code =
        raw ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
    return ClassifySqlState(code, Error("START_REPLICATION failed"));
  }
  streaming_ = true;
  return Status::OK();
}

Result<int> Connection::ReadCopy(std::string_view* msg) {
  FreeCopy();
  int n = PQgetCopyData(conn_, &copy_, /*async=*/1);
  if (n == 0) {
    if (PQconsumeInput(conn_) == 0) {
      streaming_ = false;  // the connection is gone
      return Error("replication stream");
    }
    n = PQgetCopyData(conn_, &copy_, 1);
    if (n == 0) return 0;
  }
  if (n > 0) {
    *msg = std::string_view(copy_, static_cast<size_t>(n));
    return 1;
  }
  streaming_ = false;
  if (n == -1) {
    // The server ended COPY: its final result holds the reason (an error
    // such as a shutdown's "terminating connection due to administrator
    // command"), which PQerrorMessage() does not.
    pg_result* raw = PQgetResult(conn_);
    PgResult r(raw);
    end_reason_ = raw ? OneLine(PQresultErrorMessage(raw)) : ErrorMessage();
    return -1;
  }
  return Error("replication stream");
}

Status Connection::SendStatus(Lsn write, Lsn flush, bool reply_requested) {
  // apply: we apply when we flush
  const std::string msg = EncodeStandbyStatus(
      StandbyStatus{write, flush, flush, NowMicros(), reply_requested});
  if (PQputCopyData(conn_, msg.data(), static_cast<int>(msg.size())) <= 0 ||
      PQflush(conn_) < 0) {
    streaming_ = false;  // reported once, here; no further status is tried
    return Error("cannot send status to PostgreSQL");
  }
  return Status::OK();
}

Status Connection::CopyOut(
    const std::string& sql,
    const std::function<Status(std::string_view row)>& on_row) {
  auto cancel = [this] {
    if (PGcancel* c = PQgetCancel(conn_)) {
      char err[256];
      PQcancel(c, err, sizeof err);
      PQfreeCancel(c);
    }
  };
  // With libpq idle (the last reply read to its ReadyForQuery), the copy's
  // bytes on the socket are the server's own: read them without libpq's
  // copy of each row (copy_raw.h).
  if (ReadsCopyItself() && PQstatus(conn_) == CONNECTION_OK && !streaming_ &&
      PQtransactionStatus(conn_) != PQTRANS_ACTIVE && PQisBusy(conn_) == 0) {
    RawCopyOptions ro;
    ro.cancel = cancel;
    ro.notice = LogNotice;
    bool broken = false;
    Status s = RawCopyOut(PQsocket(conn_), sql, on_row, ro, &broken);
    // Out of step with the server: libpq's next use finds the connection
    // closed and says so, rather than reading the middle of a reply.
    if (broken) shutdown(PQsocket(conn_), SHUT_RDWR);
    return s;
  }
  pg_result* raw = PQexec(conn_, sql.c_str());
  PgResult r(raw);
  if (raw == nullptr || PQresultStatus(raw) != PGRES_COPY_OUT) {
    const char* code =
        raw ? PQresultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
    return ClassifySqlState(code, Error("COPY failed"));
  }
  Status failed;
  bool cancelled = false;
  for (;;) {
    char* buf = nullptr;
    const int n = PQgetCopyData(conn_, &buf, /*async=*/0);
    if (n > 0) {
      // One row at a time: libpq hands over each CopyData as it arrives,
      // so memory holds a row, never the table.
      if (failed.ok())
        failed = on_row(std::string_view(buf, static_cast<size_t>(n)));
      PQfreemem(buf);
      // Ask the server (once) to stop sending; what is in flight is read
      // and dropped so the connection stays usable.
      if (!failed.ok() && !cancelled) {
        cancelled = true;
        cancel();
      }
      continue;
    }
    if (n == -1) break;
    return Error("COPY");  // -2: the connection failed
  }
  // The command's own result says whether the copy completed.
  for (pg_result* end; (end = PQgetResult(conn_)) != nullptr;) {
    PgResult e(end);
    if (failed.ok() && PQresultStatus(end) != PGRES_COMMAND_OK) {
      const char* code = PQresultErrorField(end, PG_DIAG_SQLSTATE);
      failed = ClassifySqlState(
          code, Status::Unavailable("COPY failed: " +
                                    OneLine(PQresultErrorMessage(end))));
    }
  }
  return failed;
}

bool Connection::ReadsCopyItself() const {
  return PQsslInUse(conn_) == 0 && PQgssEncInUse(conn_) == 0;
}

Status Connection::WidenReceiveBuffer(size_t bytes) {
  // CopyOut reads into a buffer of its own then (8 ms saved per connection
  // of a snapshot on a unix socket: the reply is `bytes` long).
  if (ReadsCopyItself()) return Status::OK();
  return Exec("SELECT repeat('x', " + std::to_string(bytes) + ")").status();
}

void Connection::EndCopy() {
  if (!streaming_) return;
  streaming_ = false;
  PQputCopyEnd(conn_, nullptr);
  PQflush(conn_);
}

int Connection::socket() const { return PQsocket(conn_); }

int Connection::ServerVersion() const { return PQserverVersion(conn_); }

bool Connection::InTransaction() const {
  const PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

std::string Connection::ServerEncoding() const {
  const char* e = PQparameterStatus(conn_, "server_encoding");
  return e != nullptr ? e : "";
}

}  // namespace cdc::pg
