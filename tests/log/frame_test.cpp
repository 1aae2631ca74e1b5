#include "cdc/log/frame.h"

#include <catch2/catch.hpp>
#include <random>

#include "cdc/base/coding.h"

namespace cdc::log {

namespace {
FrameHeader Sample() {
  FrameHeader h;
  h.flags = kFlagTxnEnd;
  h.first_seq = 0x0102030405060708ull;
  h.event_count = 3;
  h.commit_lsn = 0x16B374D848ull;
  h.commit_time = 1764402062123456;
  h.xid = 750;
  return h;
}
}  // namespace

TEST_CASE("frame header layout is byte-exact", "[log][frame]") {
  Codec codec;
  std::string raw = "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n";
  std::string out;
  codec.EncodeFrame(Sample(), raw, &out);
  REQUIRE(out.size() >= kFrameHeaderSize);
  CHECK(out.substr(0, 4) == "CDCF");
  CHECK(out[4] == 2);     // version
  CHECK(out[5] == 1);     // TXN_END
  CHECK(out[7] == 0);     // reserved
  CHECK(out[8] == 0x08);  // first seq, little-endian
  CHECK(out[15] == 0x01);
  CHECK(GetFixed32(out.data() + 16) == 3);
  CHECK(GetFixed32(out.data() + 20) == out.size() - kFrameHeaderSize);
  CHECK(GetFixed32(out.data() + 24) == raw.size());
  CHECK(GetFixed32(out.data() + 28) == 0);
  CHECK(GetFixed64(out.data() + 32) == 0x16B374D848ull);
  CHECK(GetFixed64(out.data() + 40) == 1764402062123456ull);
  CHECK(GetFixed64(out.data() + 48) == 750);
}

TEST_CASE("the codec follows the frame's size", "[log][frame]") {
  // Small frames are stored (zstd's fixed cost outweighs its saving),
  // middle ones get level -1, large ones the configured level; all of them
  // round-trip, and compressible ones from the middle size on shrink.
  Codec codec;
  const std::string line = "{\"op\":\"c\",\"k\":\"same text again\"}\n";
  for (size_t size : {line.size(), kStoredFrameBytes - 1, kStoredFrameBytes,
                      kSmallFrameBytes - 1, kSmallFrameBytes, size_t{300000}}) {
    std::string raw;
    while (raw.size() + line.size() < size) raw += line;
    raw.append(size - raw.size() - 1, 'x');
    raw.push_back('\n');
    REQUIRE(raw.size() == size);
    std::string out;
    codec.EncodeFrame(Sample(), raw, &out);
    FrameHeader h;
    REQUIRE(DecodeHeader(out.data(), &h) == HeaderState::kOk);
    INFO("raw size " << size);
    CHECK(h.codec == (size < kStoredFrameBytes ? kCodecNone : kCodecZstd));
    if (h.codec == kCodecZstd) CHECK(h.payload_len < raw.size() / 4);
    std::string_view payload(out.data() + kFrameHeaderSize, h.payload_len);
    CHECK(Codec::ChecksumOk(out.data(), payload, h.checksum));
    std::string back;
    REQUIRE(codec.Decompress(h, payload, &back).ok());
    CHECK(back == raw);
  }
}

TEST_CASE("frames round-trip, compressed and stored", "[log][frame]") {
  Codec codec;
  std::mt19937_64 rng(7);
  std::string compressible, random;
  for (int i = 0; i < 2000; ++i) compressible += "{\"k\":\"same text\"}\n";
  for (int i = 0; i < 4000; ++i) random.push_back(static_cast<char>(rng()));
  for (const std::string* raw : {&compressible, &random}) {
    std::string out;
    codec.EncodeFrame(Sample(), *raw, &out);
    FrameHeader h;
    REQUIRE(DecodeHeader(out.data(), &h) == HeaderState::kOk);
    CHECK(h.codec == (raw == &compressible ? kCodecZstd : kCodecNone));
    std::string_view payload(out.data() + kFrameHeaderSize, h.payload_len);
    CHECK(Codec::ChecksumOk(out.data(), payload, h.checksum));
    std::string back;
    REQUIRE(codec.Decompress(h, payload, &back).ok());
    CHECK(back == *raw);
    CHECK(h.first_seq == Sample().first_seq);
    CHECK(h.txn_end());
  }
}

TEST_CASE("large frames round-trip, compressed in pieces or stored",
          "[log][frame]") {
  Codec codec;
  std::mt19937_64 rng(11);
  std::string compressible, random;
  while (compressible.size() < kLargeFrameBytes + 12345)
    compressible += "{\"k\":\"some repeated text " +
                    std::to_string(compressible.size() % 97) + "\"}\n";
  while (random.size() < kLargeFrameBytes + 777)
    random.push_back(static_cast<char>(rng()));
  for (const std::string* raw : {&compressible, &random}) {
    std::string out = "before";  // appended to, as the writer does
    codec.EncodeFrame(Sample(), *raw, &out);
    REQUIRE(out.compare(0, 6, "before") == 0);
    FrameHeader h;
    REQUIRE(DecodeHeader(out.data() + 6, &h) == HeaderState::kOk);
    CHECK(h.codec == (raw == &compressible ? kCodecZstd : kCodecNone));
    CHECK(out.size() == 6 + kFrameHeaderSize + h.payload_len);
    if (h.codec == kCodecZstd) CHECK(h.payload_len < raw->size() / 4);
    std::string_view payload(out.data() + 6 + kFrameHeaderSize, h.payload_len);
    CHECK(Codec::ChecksumOk(out.data() + 6, payload, h.checksum));
    std::string back;
    REQUIRE(codec.Decompress(h, payload, &back).ok());
    CHECK(back == *raw);
  }
  // The context is as good as new for the next, small frame.
  std::string out, back;
  std::string small(kSmallFrameBytes * 2, 'a');
  codec.EncodeFrame(Sample(), small, &out);
  FrameHeader h;
  REQUIRE(DecodeHeader(out.data(), &h) == HeaderState::kOk);
  std::string_view payload(out.data() + kFrameHeaderSize, h.payload_len);
  REQUIRE(codec.Decompress(h, payload, &back).ok());
  CHECK(back == small);
}

TEST_CASE("every flipped byte of a frame is caught", "[log][frame]") {
  Codec codec;
  std::string out;
  codec.EncodeFrame(Sample(), "{\"a\":\"some event text\"}\n", &out);
  for (size_t i = 0; i < out.size(); ++i) {
    std::string bad = out;
    bad[i] ^= 0x01;
    FrameHeader h;
    HeaderState st = DecodeHeader(bad.data(), &h);
    bool caught =
        st != HeaderState::kOk ||
        bad.size() != kFrameHeaderSize + h.payload_len ||
        !Codec::ChecksumOk(
            bad.data(),
            std::string_view(bad.data() + kFrameHeaderSize, h.payload_len),
            h.checksum);
    INFO("byte " << i);
    CHECK(caught);
  }
}

TEST_CASE("headers of other versions or impossible fields are refused",
          "[log][frame]") {
  Codec codec;
  std::string out;
  codec.EncodeFrame(Sample(), "{}\n{}\n{}\n", &out);
  FrameHeader h;
  std::string v3 = out;
  v3[4] = 3;
  CHECK(DecodeHeader(v3.data(), &h) == HeaderState::kBadVersion);
  CHECK(DescribeHeaderState(HeaderState::kBadVersion, h) ==
        "frame format version 3 is not supported (this build reads versions "
        "1 and 2)");
  // Version 1 has no table: its bytes 28..31 must stay 0.
  FrameHeader v1h = Sample();
  v1h.version = kFormatVersion1;
  std::string v1;
  codec.EncodeFrame(v1h, "{}\n{}\n{}\n", &v1);
  CHECK(v1[4] == 1);
  CHECK(DecodeHeader(v1.data(), &h) == HeaderState::kOk);
  v1[28] = 1;
  CHECK(DecodeHeader(v1.data(), &h) == HeaderState::kBadFields);
  std::string flags = out;
  flags[5] = 0x40;
  CHECK(DecodeHeader(flags.data(), &h) == HeaderState::kBadFields);
  std::string magic = out;
  magic[0] = 'X';
  CHECK(DecodeHeader(magic.data(), &h) == HeaderState::kBadMagic);
}

}  // namespace cdc::log
