#include "cdc/mariadb/conn.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "cdc/base/coding.h"
#include "cdc/event/json_text.h"

namespace cdc::mariadb {

namespace {

Result<std::string> Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || event::HexValue(s[i + 1]) < 0 ||
        event::HexValue(s[i + 2]) < 0)
      return Status::Usage("--dsn: a bad %-escape in \"" + std::string(s) +
                           "\"");
    out.push_back(static_cast<char>(event::HexValue(s[i + 1]) * 16 +
                                    event::HexValue(s[i + 2])));
    i += 2;
  }
  return out;
}

bool Truthy(std::string_view v) {
  return v == "1" || v == "true" || v == "on" || v == "yes";
}

}  // namespace

std::string Dsn::Redacted() const {
  std::string s = "mariadb://" + user + "@" + host;
  if (socket.empty()) s += ":" + std::to_string(port);
  s += "/" + database;
  if (!socket.empty()) s += "?socket=" + socket;
  return s;
}

Result<Dsn> ParseDsn(std::string_view uri) {
  Dsn d;
  std::string_view rest;
  if (uri.starts_with("mariadb://"))
    rest = uri.substr(10);
  else if (uri.starts_with("mysql://"))
    rest = uri.substr(8);
  else
    return Status::Usage("--dsn: not a mariadb:// or mysql:// URI");
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view path;
  if (size_t s = rest.find('/'); s != std::string_view::npos) {
    path = rest.substr(s + 1);
    rest = rest.substr(0, s);
  }
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user = rest.substr(0, at);
    if (user.find(':') != std::string_view::npos)
      return Status::Usage(
          "--dsn must not carry a password; use MYSQL_PWD, an option file's "
          "[client] group or --password-file");
    CDC_ASSIGN_OR_RETURN(d.user, Unescape(user));
    rest = rest.substr(at + 1);
  }
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    const size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return Status::Usage("--dsn: an unclosed [ in the host");
    d.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      return Status::Usage("--dsn: text after the ] of the host");
    if (!rest.empty()) port = rest.substr(1);
  } else if (size_t c = rest.rfind(':'); c != std::string_view::npos) {
    d.host = std::string(rest.substr(0, c));
    port = rest.substr(c + 1);
  } else if (!rest.empty()) {
    d.host = std::string(rest);
  }
  if (!port.empty() || rest.ends_with(':')) {
    unsigned p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 6553) {
        p = 0;
        break;
      }
      p = p * 10 + static_cast<unsigned>(c - '0');
    }
    if (p == 0 || p > 65535)
      return Status::Usage("--dsn: port \"" + std::string(port) +
                           "\" is not a number from 1 to 65535");
    d.port = p;
  }
  CDC_ASSIGN_OR_RETURN(d.database, Unescape(path));
  if (d.database.empty())
    return Status::Usage(
        "--dsn names no database (mariadb://USER@HOST:PORT/DB): capture "
        "reads the tables of one database");
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    const size_t eq = kv.find('=');
    const std::string_view k = kv.substr(0, eq);
    CDC_ASSIGN_OR_RETURN(
        std::string v,
        Unescape(eq == std::string_view::npos ? "" : kv.substr(eq + 1)));
    if (k == "socket") {
      d.socket = v;
    } else if (k == "ssl-ca") {
      d.ssl_ca = v;
    } else if (k == "ssl-cert") {
      d.ssl_cert = v;
    } else if (k == "ssl-key") {
      d.ssl_key = v;
    } else if (k == "ssl-verify") {
      d.ssl_verify = Truthy(v);
    } else if (k == "password") {
      return Status::Usage(
          "--dsn must not carry a password; use MYSQL_PWD, an option file's "
          "[client] group or --password-file");
    } else {
      return Status::Usage("--dsn: unknown parameter \"" + std::string(k) +
                           "\" (known: socket, ssl-ca, ssl-cert, ssl-key, "
                           "ssl-verify)");
    }
  }
  if (d.user.empty()) {
    const char* u = std::getenv("USER");
    d.user = u != nullptr ? u : "root";
  }
  return d;
}

Connection::~Connection() {
  if (m_ != nullptr) mysql_close(m_);
}

Status Connection::Error(const std::string& what) const {
  const unsigned e = mysql_errno(m_);
  std::string msg = what + ": " + mysql_error(m_);
  switch (e) {
    case ER_ACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
      return Status::Permission(msg);
    case ER_BAD_DB_ERROR:
      return Status::Config(msg);
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_UNKNOWN_HOST:
    case ER_SERVER_SHUTDOWN:
    case ER_CON_COUNT_ERROR:
    case ER_CONNECTION_KILLED:
    // Passing conflicts, worth another try: a lock wait, a deadlock, and a
    // table created after a snapshot's read view was opened.
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_LOCK_DEADLOCK:
    case ER_TABLE_DEF_CHANGED:
      return Status::Unavailable(msg);
    default:
      if (e >= 2000 && e < 3000) return Status::Unavailable(msg);
      return Status::Config(msg);
  }
}

Result<std::unique_ptr<Connection>> Connection::Connect(const Dsn& d,
                                                        unsigned io_timeout_s) {
  MYSQL* m = mysql_init(nullptr);
  if (m == nullptr) return Status::Internal("mysql_init failed");
  std::unique_ptr<Connection> c(new Connection(m));
  // The [client] group of the option files, as the mariadb client reads.
  mysql_optionsv(m, MYSQL_READ_DEFAULT_GROUP, "client");
  unsigned timeout = 10;
  mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  // No statement of ours waits on the server for long: a peer silent this
  // long is dead (the dump connection's bound is a few heartbeats).
  unsigned io_timeout = io_timeout_s;
  mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  if (!d.ssl_ca.empty()) mysql_optionsv(m, MYSQL_OPT_SSL_CA, d.ssl_ca.c_str());
  if (!d.ssl_cert.empty())
    mysql_optionsv(m, MYSQL_OPT_SSL_CERT, d.ssl_cert.c_str());
  if (!d.ssl_key.empty())
    mysql_optionsv(m, MYSQL_OPT_SSL_KEY, d.ssl_key.c_str());
  if (!d.ssl_ca.empty() || d.ssl_verify) {
    my_bool on = 1;
    mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
    if (d.ssl_verify) mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
  }
  const char* password =
      d.password.empty() ? std::getenv("MYSQL_PWD") : d.password.c_str();
  if (mysql_real_connect(m, d.host.c_str(), d.user.c_str(), password,
                         d.database.c_str(), d.port,
                         d.socket.empty() ? nullptr : d.socket.c_str(),
                         0) == nullptr) {
    const unsigned e = mysql_errno(m);
    if (e == CR_SSL_CONNECTION_ERROR)
      return Status::Config("cannot connect to " + d.Redacted() + ": " +
                            mysql_error(m));
    return c->Error("cannot connect to " + d.Redacted());
  }
  CDC_RETURN_IF_ERROR(c->Exec("SET NAMES utf8mb4"));
  return c;
}

Status Connection::Exec(const std::string& sql) {
  if (mysql_real_query(m_, sql.data(), sql.size()) != 0)
    return Error(sql.substr(0, 60));
  MYSQL_RES* r = mysql_store_result(m_);
  if (r != nullptr) mysql_free_result(r);
  return Status::OK();
}

Result<std::vector<Row>> Connection::Query(const std::string& sql) {
  if (mysql_real_query(m_, sql.data(), sql.size()) != 0)
    return Error(sql.substr(0, 60));
  MYSQL_RES* r = mysql_store_result(m_);
  std::vector<Row> rows;
  if (r == nullptr) {
    if (mysql_field_count(m_) != 0) return Error(sql.substr(0, 60));
    return rows;
  }
  const unsigned n = mysql_num_fields(r);
  while (MYSQL_ROW row = mysql_fetch_row(r)) {
    unsigned long* len = mysql_fetch_lengths(r);
    Row out(n);
    for (unsigned i = 0; i < n; ++i)
      if (row[i] != nullptr) out[i] = std::string(row[i], len[i]);
    rows.push_back(std::move(out));
  }
  mysql_free_result(r);
  return rows;
}

Result<std::string> Connection::Value(const std::string& sql) {
  CDC_ASSIGN_OR_RETURN(std::vector<Row> rows, Query(sql));
  if (rows.empty() || rows[0].empty())
    return Status::NotFound("no row from " + sql.substr(0, 60));
  return rows[0][0].value_or("");
}

std::string Connection::Quote(std::string_view s) {
  std::string out(s.size() * 2 + 3, '\0');
  out[0] = '\'';
  const unsigned long n =
      mysql_real_escape_string(m_, out.data() + 1, s.data(), s.size());
  out.resize(n + 1);
  out.push_back('\'');
  return out;
}

std::string Connection::server_version() const {
  return mysql_get_server_info(m_);
}

uint64_t Connection::thread_id() const { return mysql_thread_id(m_); }

Status Connection::StartDump(uint32_t server_id, const std::string& gtid_state,
                             double heartbeat_s) {
  // Checksums as the server writes them (we verify them); MariaDB's GTID
  // events and capabilities (4: GTID-aware, annotate events optional);
  // the position; heartbeats so an idle server is not mistaken for a dead
  // one; strict GTID checks so a diverged server is an error.
  CDC_RETURN_IF_ERROR(
      Exec("SET @master_binlog_checksum = @@global.binlog_checksum"));
  CDC_RETURN_IF_ERROR(Exec("SET @mariadb_slave_capability = 4"));
  CDC_RETURN_IF_ERROR(Exec("SET @slave_connect_state = " + Quote(gtid_state)));
  CDC_RETURN_IF_ERROR(Exec("SET @slave_gtid_strict_mode = 1"));
  CDC_RETURN_IF_ERROR(Exec("SET @slave_gtid_ignore_duplicates = 0"));
  const uint64_t ns = static_cast<uint64_t>(heartbeat_s * 1e9);
  CDC_RETURN_IF_ERROR(
      Exec("SET @master_heartbeat_period = " + std::to_string(ns)));
  char buf[10];
  PutFixed32(buf, 4);              // position: the file's start
  PutFixed16(buf + 4, 0);          // flags: block at the end
  PutFixed32(buf + 6, server_id);  // who we are
  // skip_check: the first reply is an event (the rotate), not an OK.
  if (m_->methods->db_command(m_, COM_BINLOG_DUMP, buf, sizeof buf, 1,
                              nullptr) != 0)
    return Error("COM_BINLOG_DUMP");
  return Status::OK();
}

Result<std::string_view> Connection::ReadEvent() {
  const unsigned long len = mysql_net_read_packet(m_);
  // packet_error is (unsigned int)-1, whatever the width of the result.
  if (len == static_cast<unsigned long>(-1) || len == 0xFFFFFFFFul ||
      len == 0) {
    const unsigned e = mysql_errno(m_);
    if (e == ER_MASTER_FATAL_ERROR_READING_BINLOG)
      return Status::Gap("reading the binlog: " + std::string(mysql_error(m_)));
    if (e == 0)
      return Status::Unavailable("the server closed the binlog stream");
    return Error("reading the binlog");
  }
  const char* p = reinterpret_cast<const char*>(m_->net.read_pos);
  if (static_cast<uint8_t>(p[0]) == 0xFE && len < 9)
    return Status::Unavailable("the server ended the binlog stream");
  if (static_cast<uint8_t>(p[0]) != 0)
    return Status::BadInput("binlog packet starts with byte " +
                            std::to_string(static_cast<uint8_t>(p[0])));
  return std::string_view(p + 1, len - 1);
}

void Connection::Shutdown() {
  const int fd = static_cast<int>(mysql_get_socket(m_));
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

RowStream::RowStream() = default;

RowStream::~RowStream() {
  if (st_ != nullptr) mysql_stmt_close(st_);
}

Status RowStream::Error(const std::string& what) const {
  const unsigned e = mysql_stmt_errno(st_);
  std::string msg = what + ": " + mysql_stmt_error(st_);
  if (e >= 2000 && e < 3000) return Status::Unavailable(msg);
  if (e == ER_CONNECTION_KILLED || e == ER_SERVER_SHUTDOWN ||
      e == ER_LOCK_WAIT_TIMEOUT || e == ER_LOCK_DEADLOCK ||
      e == ER_TABLE_DEF_CHANGED)
    return Status::Unavailable(msg);
  if (e == ER_TABLEACCESS_DENIED_ERROR || e == ER_COLUMNACCESS_DENIED_ERROR)
    return Status::Permission(msg);
  return Status::Config(msg);
}

Status RowStream::Bind() {
  for (size_t i = 0; i < cols_.size(); ++i) {
    Col& c = cols_[i];
    MYSQL_BIND& b = binds_[i];
    std::memset(&b, 0, sizeof b);
    b.is_null = &c.is_null;
    b.error = &c.error;
    b.length = &c.length;
    switch (c.kind) {
      case Kind::kSigned:
      case Kind::kUnsigned:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = &c.i64;
        b.is_unsigned = c.kind == Kind::kUnsigned;
        break;
      case Kind::kFloat:
        b.buffer_type = MYSQL_TYPE_FLOAT;
        b.buffer = &c.f32;
        break;
      case Kind::kDouble:
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = &c.f64;
        break;
      case Kind::kTime:
        b.buffer_type = MYSQL_TYPE_DATETIME;
        b.buffer = &times_[i];
        break;
      case Kind::kBytes:
        b.buffer_type = MYSQL_TYPE_BLOB;
        b.buffer = c.buf.data();
        b.buffer_length = c.buf.size();
        break;
    }
  }
  if (mysql_stmt_bind_result(st_, binds_.data()) != 0)
    return Error("binding the columns of " + sql_.substr(0, 60));
  return Status::OK();
}

Result<bool> RowStream::Next() {
  int r = mysql_stmt_fetch(st_);
  if (r == MYSQL_NO_DATA) return false;
  if (r == 1) return Error("reading " + sql_.substr(0, 60));
  if (r == MYSQL_DATA_TRUNCATED) {
    // A value longer than its buffer: the buffer grows to it, the value is
    // fetched again whole, and later rows use the larger buffer.
    bool grown = false;
    for (size_t i = 0; i < cols_.size(); ++i) {
      Col& c = cols_[i];
      if (c.kind != Kind::kBytes || c.error == 0 || c.length <= c.buf.size())
        continue;
      c.buf.resize(c.length);
      MYSQL_BIND& b = binds_[i];
      b.buffer = c.buf.data();
      b.buffer_length = c.buf.size();
      if (mysql_stmt_fetch_column(st_, &b, static_cast<unsigned>(i), 0) != 0)
        return Error("reading a long value of " + sql_.substr(0, 60));
      c.error = 0;
      grown = true;
    }
    if (!grown)
      return Status::Internal("a value of " + sql_.substr(0, 60) +
                              " was cut short by its conversion");
    CDC_RETURN_IF_ERROR(Bind());
  }
  for (size_t i = 0; i < cols_.size(); ++i) {
    Col& c = cols_[i];
    if (c.kind != Kind::kTime || c.is_null) continue;
    const MYSQL_TIME& t = times_[i];
    c.time.neg = t.neg != 0;
    c.time.year = t.year;
    c.time.month = t.month;
    // A TIME's days: libmariadb counts them in `hour` and leaves them in
    // `day` too; a library that does not shows hours below 24.
    const bool is_time = t.time_type == MYSQL_TIMESTAMP_TIME;
    c.time.day = is_time ? 0 : t.day;
    c.time.hour = is_time && t.hour < 24 ? t.day * 24 + t.hour : t.hour;
    c.time.minute = t.minute;
    c.time.second = t.second;
    c.time.micros = static_cast<uint32_t>(t.second_part);
  }
  return true;
}

Result<std::unique_ptr<RowStream>> Connection::Stream(
    const std::string& sql, std::vector<RowStream::Kind> kinds) {
  std::unique_ptr<RowStream> s(new RowStream());
  s->sql_ = sql;
  s->st_ = mysql_stmt_init(m_);
  if (s->st_ == nullptr) return Error("mysql_stmt_init");
  if (mysql_stmt_prepare(s->st_, sql.data(), sql.size()) != 0)
    return s->Error(sql.substr(0, 60));
  if (mysql_stmt_field_count(s->st_) != kinds.size())
    return Status::Internal(sql.substr(0, 60) + " returns " +
                            std::to_string(mysql_stmt_field_count(s->st_)) +
                            " columns, not " + std::to_string(kinds.size()));
  if (mysql_stmt_execute(s->st_) != 0) return s->Error(sql.substr(0, 60));
  s->cols_.resize(kinds.size());
  s->binds_.resize(kinds.size());
  s->times_.resize(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    s->cols_[i].kind = kinds[i];
    if (kinds[i] == RowStream::Kind::kBytes) s->cols_[i].buf.resize(256);
  }
  CDC_RETURN_IF_ERROR(s->Bind());
  return s;
}

}  // namespace cdc::mariadb
