// cdc-nats-probe: a small NATS client for cdc-nats's tests and bench,
// written against the same C client (nats.c) as cdc-nats.
//
//   cdc-nats-probe URLS req SUBJECT [BODY]
//       one request (e.g. the JetStream JSON API: $JS.API.STREAM.INFO.X);
//       prints the reply's body
//   cdc-nats-probe URLS pub SUBJECT BODY HEADERS
//       one JetStream publish with HEADERS ("Name: value" pairs separated
//       by tabs), waiting for the server's answer (a foreign publisher)
//   cdc-nats-probe URLS dump STREAM
//       every message of STREAM in order, one line each:
//       STREAM_SEQ MSG_ID CDC_SEQ LAST SUBJECT BODY_BYTES
//   cdc-nats-probe URLS json STREAM
//       the same messages as JSON lines: {"stream_seq":N,"subject":S,
//       "headers":{...},"body":BODY} (BODY as it is: the events are JSON)
//   cdc-nats-probe URLS loop SUBJECT FILE MAX_PENDING [HEADERS]
//       the limit for bench/nats: publishes each line of FILE to SUBJECT
//       with js_PublishAsync (MAX_PENDING in flight, a Nats-Msg-Id each),
//       waits for every answer; prints "EVENTS SECONDS EVENTS_PER_S".
//       With HEADERS (line N the headers of message N, "Name: value"
//       pairs separated by tabs, Nats-Msg-Id among them) each message is
//       built with those headers and sent with js_PublishMsgAsync
#include <nats/nats.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

int Fail(const char* what, natsStatus s) {
  fprintf(stderr, "cdc-nats-probe: %s: %s (%s)\n", what, natsStatus_GetText(s),
          nats_GetLastError(nullptr) ? nats_GetLastError(nullptr) : "");
  return 1;
}

std::string Header(natsMsg* m, const char* k) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(m, k, &v) == NATS_OK && v != nullptr) return v;
  return "-";
}

int Req(natsConnection* nc, const char* subject, const char* body) {
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_RequestString(&reply, nc, subject, body, 5000);
  if (s != NATS_OK) return Fail("request", s);
  fwrite(natsMsg_GetData(reply), 1, natsMsg_GetDataLength(reply), stdout);
  fputc('\n', stdout);
  natsMsg_Destroy(reply);
  return 0;
}

std::string Quote(const char* v) {
  std::string o = "\"";
  for (const char* p = v; *p; ++p) {
    if (*p == '"' || *p == '\\') o.push_back('\\');
    o.push_back(*p);
  }
  return o + "\"";
}

void PrintJson(natsMsg* m, uint64_t stream_seq) {
  std::string o = "{\"stream_seq\":" + std::to_string(stream_seq) +
                  ",\"subject\":" + Quote(natsMsg_GetSubject(m)) +
                  ",\"headers\":{";
  const char** keys = nullptr;
  int n = 0;
  if (natsMsgHeader_Keys(m, &keys, &n) == NATS_OK) {
    for (int i = 0; i < n; ++i) {
      if (i > 0) o += ",";
      o += Quote(keys[i]) + ":" + Quote(Header(m, keys[i]).c_str());
    }
    free(keys);
  }
  o += "},\"body\":";
  o.append(natsMsg_GetData(m), natsMsg_GetDataLength(m));
  o += "}\n";
  fwrite(o.data(), 1, o.size(), stdout);
}

int Dump(natsConnection* nc, const char* stream, bool json) {
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_JetStream(&js, nc, nullptr);
  if (s != NATS_OK) return Fail("jetstream", s);
  jsStreamInfo* si = nullptr;
  jsErrCode ec;
  s = js_GetStreamInfo(&si, js, stream, nullptr, &ec);
  if (s != NATS_OK) return Fail("stream info", s);
  const uint64_t last = si->State.LastSeq, msgs = si->State.Msgs;
  // nats.c wants a subject: the stream's own when it has one.
  std::string subject =
      si->Config->SubjectsLen == 1 ? si->Config->Subjects[0] : ">";
  jsStreamInfo_Destroy(si);
  if (msgs == 0) return 0;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream;
  so.Ordered = true;
  so.Config.DeliverPolicy = js_DeliverAll;
  natsSubscription* sub = nullptr;
  s = js_SubscribeSync(&sub, js, subject.c_str(), nullptr, &so, &ec);
  if (s != NATS_OK) return Fail("subscribe", s);
  uint64_t seen = 0;
  while (seen < msgs) {
    natsMsg* m = nullptr;
    s = natsSubscription_NextMsg(&m, sub, 10000);
    if (s != NATS_OK) return Fail("next message", s);
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, m) != NATS_OK) {
      natsMsg_Destroy(m);
      continue;
    }
    if (json)
      PrintJson(m, meta->Sequence.Stream);
    else
      printf("%llu %s %s %s %s %d\n",
             static_cast<unsigned long long>(meta->Sequence.Stream),
             Header(m, "Nats-Msg-Id").c_str(), Header(m, "Cdc-Seq").c_str(),
             Header(m, "Cdc-Last").c_str(), natsMsg_GetSubject(m),
             natsMsg_GetDataLength(m));
    ++seen;
    const bool end = meta->Sequence.Stream >= last;
    jsMsgMetaData_Destroy(meta);
    natsMsg_Destroy(m);
    if (end) break;
  }
  natsSubscription_Destroy(sub);
  jsCtx_Destroy(js);
  return 0;
}

// The headers of one message: "Name: value" pairs separated by tabs.
natsStatus SetHeaders(natsMsg* m, const std::string& line) {
  natsStatus s = NATS_OK;
  for (size_t p = 0; s == NATS_OK && p < line.size();) {
    size_t tab = line.find('\t', p);
    if (tab == std::string::npos) tab = line.size();
    const std::string pair = line.substr(p, tab - p);
    const size_t colon = pair.find(": ");
    if (colon == std::string::npos) return NATS_INVALID_ARG;
    s = natsMsgHeader_Set(m, pair.substr(0, colon).c_str(),
                          pair.c_str() + colon + 2);
    p = tab + 1;
  }
  return s;
}

int Pub(natsConnection* nc, const char* subject, const char* body,
        const char* headers) {
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_JetStream(&js, nc, nullptr);
  if (s != NATS_OK) return Fail("jetstream", s);
  natsMsg* m = nullptr;
  s = natsMsg_Create(&m, subject, nullptr, body,
                     static_cast<int>(strlen(body)));
  if (s == NATS_OK) s = SetHeaders(m, headers);
  jsPubAck* pa = nullptr;
  if (s == NATS_OK) s = js_PublishMsg(&pa, js, m, nullptr, nullptr);
  natsMsg_Destroy(m);
  if (s != NATS_OK) return Fail("publish", s);
  printf("%llu\n", static_cast<unsigned long long>(pa->Sequence));
  jsPubAck_Destroy(pa);
  jsCtx_Destroy(js);
  return 0;
}

std::vector<std::string> Lines(const char* file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(std::move(l));
  return lines;
}

int Loop(natsConnection* nc, const char* subject, const char* file,
         int max_pending, const char* headers_file) {
  const std::vector<std::string> lines = Lines(file);
  const std::vector<std::string> headers = headers_file != nullptr
                                               ? Lines(headers_file)
                                               : std::vector<std::string>();
  if (headers_file != nullptr && headers.size() != lines.size()) {
    fprintf(stderr, "cdc-nats-probe: %zu header lines for %zu messages\n",
            headers.size(), lines.size());
    return 1;
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = max_pending;
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_JetStream(&js, nc, &jo);
  if (s != NATS_OK) return Fail("jetstream", s);
  auto start = std::chrono::steady_clock::now();
  char id[64];
  for (size_t i = 0; i < lines.size(); ++i) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    const int len = static_cast<int>(lines[i].size());
    if (headers_file == nullptr) {
      snprintf(id, sizeof id, "loop:%zu", i + 1);
      po.MsgId = id;
      s = js_PublishAsync(js, subject, lines[i].data(), len, &po);
    } else {
      natsMsg* m = nullptr;
      s = natsMsg_Create(&m, subject, nullptr, lines[i].data(), len);
      if (s == NATS_OK) s = SetHeaders(m, headers[i]);
      if (s == NATS_OK) s = js_PublishMsgAsync(js, &m, &po);
      natsMsg_Destroy(m);  // null once the library owns it
    }
    if (s != NATS_OK) return Fail("publish", s);
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 60000;
  s = js_PublishAsyncComplete(js, &po);
  if (s != NATS_OK) return Fail("publish complete", s);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  printf("%zu %.3f %.0f\n", lines.size(), secs, lines.size() / secs);
  jsCtx_Destroy(js);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cdc-nats-probe URLS req|pub|dump|json|loop ...\n");
    return 64;
  }
  natsOptions* opts = nullptr;
  natsOptions_Create(&opts);
  std::vector<std::string> urls;
  std::string list = argv[1];
  for (size_t p = 0; p <= list.size();) {
    size_t c = list.find(',', p);
    if (c == std::string::npos) c = list.size();
    if (c > p) urls.push_back(list.substr(p, c - p));
    p = c + 1;
  }
  std::vector<const char*> u;
  for (auto& x : urls) u.push_back(x.c_str());
  natsOptions_SetServers(opts, u.data(), static_cast<int>(u.size()));
  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_Connect(&nc, opts);
  if (s != NATS_OK) return Fail("connect", s);
  int rc = 64;
  std::string cmd = argv[2];
  if (cmd == "req" && argc >= 4)
    rc = Req(nc, argv[3], argc >= 5 ? argv[4] : "");
  else if (cmd == "pub" && argc >= 6)
    rc = Pub(nc, argv[3], argv[4], argv[5]);
  else if (cmd == "dump" && argc >= 4)
    rc = Dump(nc, argv[3], false);
  else if (cmd == "json" && argc >= 4)
    rc = Dump(nc, argv[3], true);
  else if (cmd == "loop" && argc >= 6)
    rc = Loop(nc, argv[3], argv[4], atoi(argv[5]),
              argc >= 7 ? argv[6] : nullptr);
  else
    fprintf(stderr, "cdc-nats-probe: bad command\n");
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return rc;
}
