#include "agent/run/tensorboard.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/support/alloc_counter.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace recur::agent;

using recur::test::error_of;
using recur::test::read_all;
using recur::test::TempDir;
using recur::test::write_all;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

// A little-endian integer of `width` bytes at `at` (the framing's length and CRCs).
uint64_t load_le(const std::string& bytes, size_t at, int width) {
  uint64_t n = 0;
  for (int i = 0; i < width; ++i)
    n |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return n;
}
uint64_t record_length(const std::string& bytes, size_t at) {
  return load_le(bytes, at, 8);
}

// The tags and the step axis of a PPO run, as the trainer logs them (Stable-Baselines3's names).
const std::vector<std::string> kTags = {"rollout/ep_rew_mean",
                                        "rollout/ep_len_mean",
                                        "train/policy_gradient_loss",
                                        "train/value_loss",
                                        "train/entropy_loss",
                                        "train/approx_kl",
                                        "train/clip_fraction",
                                        "train/explained_variance",
                                        "train/learning_rate",
                                        "time/fps",
                                        "recur/grad_norm"};

float value_of(size_t tag, int update) {
  return static_cast<float>(0.25 * static_cast<double>(update * (tag + 1))) - 3.0f;
}

}  // namespace

TEST_CASE("tensorboard: scalars written are read back, while the writer is still open") {
  // RECUR_KEEP_TB=<dir>: the file is written there and kept (tools/check_tensorboard.py reads it).
  TempDir tmp("tensorboard_test");
  fs::path dir = tmp.path / "tb";
  if (const char* keep = std::getenv("RECUR_KEEP_TB"); keep != nullptr && *keep != '\0') dir = keep;

  TensorBoardWriter tb(dir);
  CHECK(tb.path().parent_path() == dir);
  CHECK(std::regex_match(tb.path().filename().string(),
                         std::regex(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+)")));
  const int updates = 20;
  std::vector<ScalarEvent> expected;
  for (int u = 1; u <= updates; ++u) {
    const int64_t step = 2048 * int64_t{u};
    for (size_t t = 0; t < kTags.size(); ++t) {
      tb.scalar(kTags[t], value_of(t, u), step);
      expected.push_back({kTags[t], step, 0, value_of(t, u)});
    }
    if (u % 5 == 0) {
      tb.scalar("eval/mean_reward", 10.0 * u, step);
      expected.push_back({"eval/mean_reward", step, 0, static_cast<float>(10.0 * u)});
    }
    tb.flush();
  }
  tb.scalar("recur/not_flushed", 1, 1);  // buffered: not in the file yet

  // Read while the writer is open: everything flushed is there, in order.
  const std::vector<ScalarEvent> got = read_tensorboard_scalars(tb.path());
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].tag == expected[i].tag);
    CHECK(got[i].step == expected[i].step);
    CHECK(got[i].value == expected[i].value);  // written as float: exact
    CHECK(got[i].wall_time > 1.6e9);
  }
  // A directory reads the same; a run directory (holding tb/) too.
  CHECK(read_tensorboard_scalars(dir).size() == expected.size());
  if (dir == tmp.path / "tb") CHECK(read_tensorboard_scalars(tmp.path).size() == expected.size());

  tb.flush();
  CHECK(read_tensorboard_scalars(tb.path()).back().tag == "recur/not_flushed");
}

TEST_CASE("tensorboard: the bytes follow TensorFlow's record format and field numbers") {
  TempDir tmp("tensorboard_test");
  fs::path file;
  {
    TensorBoardWriter tb(tmp.path);
    file = tb.path();
    tb.scalar("a/b", 1.5, 5);
  }  // the destructor flushes
  const std::string bytes = read_all(file);

  // Record 0: Event{wall_time (field 1, fixed64), file_version (field 3) = "brain.Event:2"}; its
  // step, 0, is proto3's default and not written.
  const std::string version =
      "\x1a\x0d"
      "brain.Event:2";
  REQUIRE(bytes.size() >= 12 + 24 + 4);
  CHECK(record_length(bytes, 0) == 9 + version.size());
  CHECK(bytes[12] == '\x09');
  CHECK(bytes.substr(12 + 9, version.size()) == version);

  // Record 1: Event{wall_time, step (field 2, varint) = 5, summary (field 5) = Summary{value
  // (field 1) = Value{tag (field 1) = "a/b", simple_value (field 2, float) = 1.5}}}.
  const size_t r1 = 12 + 24 + 4;
  REQUIRE(record_length(bytes, r1) == 25);
  const std::string data = bytes.substr(r1 + 12, 25);
  CHECK(data[0] == '\x09');
  CHECK(data.substr(9) == std::string("\x10\x05\x2a\x0c\x0a\x0a\x0a\x03"
                                      "a/b"
                                      "\x15\x00\x00\xc0\x3f",
                                      16));
  // Both CRCs of the record.
  CHECK(load_le(bytes, r1 + 8, 4) == mask_crc32c(crc32c(bytes.substr(r1, 8))));
  CHECK(load_le(bytes, r1 + 12 + 25, 4) == mask_crc32c(crc32c(data)));
  CHECK(record_length(bytes, r1) + r1 + 16 == bytes.size());
}

TEST_CASE("tensorboard: a file written by TensorBoard's own Python writer is read") {
  // tensorboard 2.21's EventFileWriter (tensorboard.summary.writer.event_file_writer), one
  // simple_value at step 2048, wall_time 1700000000.5. Its file_version Event also holds
  // source_metadata (field 10), which recur's proto leaves out: skipped as an unknown field.
  const std::string bytes = from_hex(
      "4800000000000000fe92489d093c6092db0ac1da411a0d627261696e2e4576656e743a32522e0a2c74656e736f"
      "72626f6172642e73756d6d6172792e7772697465722e6576656e745f66696c655f7772697465728edaf5a62a00"
      "000000000000ae8d91f50900002040fc54d9411080102a1c0a1a0a13726f6c6c6f75742f65705f7265775f6d65"
      "616e150000ac4194f1319b");
  TempDir tmp("tensorboard_test");
  const fs::path file = tmp.path / "events.out.tfevents.1700000000.host.1.0";
  write_all(file, bytes);
  const std::vector<ScalarEvent> got = read_tensorboard_scalars(file);
  REQUIRE(got.size() == 1);
  CHECK(got[0].tag == "rollout/ep_rew_mean");
  CHECK(got[0].step == 2048);
  CHECK(got[0].wall_time == 1700000000.5);
  CHECK(got[0].value == 21.5f);
}

TEST_CASE("tensorboard: corrupt and truncated records are refused, naming file and offset") {
  TempDir tmp("tensorboard_test");
  fs::path file;
  {
    TensorBoardWriter tb(tmp.path);
    file = tb.path();
    tb.scalar("train/value_loss", 0.5, 100);
    tb.scalar("train/value_loss", 0.25, 200);
  }
  const std::string good = read_all(file);
  const size_t r1 = 12 + record_length(good, 0) + 4;  // offset of the second record
  const size_t r2 = r1 + 12 + record_length(good, r1) + 4;
  REQUIRE(read_tensorboard_scalars(file).size() == 2);

  SUBCASE("a flipped byte in the data") {
    std::string bad = good;
    bad[r2 + 12 + 3] = static_cast<char>(bad[r2 + 12 + 3] ^ 0x10);
    write_all(file, bad);
    const std::string e = error_of([&] { read_tensorboard_scalars(file); });
    CHECK(e.find(file.string()) != std::string::npos);
    CHECK(e.find("bad CRC of the data of the record at byte " + std::to_string(r2)) !=
          std::string::npos);
  }
  SUBCASE("a flipped byte in the length") {
    std::string bad = good;
    bad[r1] = static_cast<char>(bad[r1] ^ 0x01);
    write_all(file, bad);
    const std::string e = error_of([&] { read_tensorboard_scalars(file); });
    CHECK(e.find(file.string()) != std::string::npos);
    CHECK(e.find("bad CRC of the length of the record at byte " + std::to_string(r1)) !=
          std::string::npos);
  }
  SUBCASE("a flipped byte in a stored CRC") {
    std::string bad = good;
    bad[good.size() - 1] = static_cast<char>(bad[good.size() - 1] ^ 0x80);
    write_all(file, bad);
    CHECK(error_of([&] {
            read_tensorboard_scalars(file);
          }).find("bad CRC of the data of the record at byte " + std::to_string(r2)) !=
          std::string::npos);
  }
  SUBCASE("a partial last record (a file cut short, or caught mid-write)") {
    for (const size_t cut : {size_t{3}, size_t{good.size() - r2 - 5}}) {
      CAPTURE(cut);
      write_all(file, good.substr(0, good.size() - cut));
      const std::string e = error_of([&] { read_tensorboard_scalars(file); });
      CHECK(e.find(file.string()) != std::string::npos);
      CHECK(e.find("truncated record at byte " + std::to_string(r2)) != std::string::npos);
    }
  }
  SUBCASE("a file that does not start with a file_version") {
    write_all(file, good.substr(r1));
    CHECK(error_of([&] { read_tensorboard_scalars(file); }).find("no file_version") !=
          std::string::npos);
  }
}

TEST_CASE("tensorboard: crc32c known answer and TFRecord's mask") {
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c("") == 0u);
  for (const uint32_t c : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x80000000u}) {
    CAPTURE(c);
    CHECK(mask_crc32c(c) == static_cast<uint32_t>(((c >> 15) | (c << 17)) + 0xa282ead8u));
  }
  // tensorboard.compat.tensorflow_stub.pywrap_tensorflow.masked_crc32c(b"123456789") and (b"").
  CHECK(mask_crc32c(crc32c("123456789")) == 0xc78ab0e5u);
  CHECK(mask_crc32c(crc32c("")) == 0xa282ead8u);
}

TEST_CASE("tensorboard: a directory that cannot be made is a recur::Error naming it") {
  TempDir tmp("tensorboard_test");
  write_all(tmp.path / "file", "x");  // a file where a directory should be: fails even as root
  const fs::path dir = tmp.path / "file" / "tb";
  const std::string e = error_of([&] { TensorBoardWriter tb(dir); });
  CHECK(e.find(dir.string()) != std::string::npos);
  CHECK(error_of([&] {
          read_tensorboard_scalars(tmp.path / "missing");
        }).find((tmp.path / "missing").string()) != std::string::npos);
  CHECK(error_of([&] { read_tensorboard_scalars(tmp.path); }).find("no TensorBoard event file") !=
        std::string::npos);
}

TEST_CASE("tensorboard: logging a scalar allocates nothing once warm") {
  if (!recur::test::AllocationCounter::available()) {
    recur::test::skip("allocation counting is off in sanitizer builds");
    return;
  }
  TempDir tmp("tensorboard_test");
  TensorBoardWriter tb(tmp.path);
  // Warm-up: the longest tag sizes the reused tag string, one update's scalars size the buffer.
  for (size_t t = 0; t < kTags.size(); ++t) tb.scalar(kTags[t], 1.0, 1);
  tb.flush();
  recur::test::AllocationCounter counter;
  for (int u = 2; u < 200; ++u) {
    for (size_t t = 0; t < kTags.size(); ++t) tb.scalar(kTags[t], value_of(t, u), 2048 * u);
    tb.flush();
  }
  CHECK(counter.count() == 0);
}

TEST_CASE("tensorboard: a second writer in the same directory (a resumed run) opens its own file") {
  TempDir tmp("tensorboard_test");
  fs::path first, second;
  {
    TensorBoardWriter a(tmp.path);
    first = a.path();
    a.scalar("time/fps", 100, 2048);
  }
  {
    TensorBoardWriter b(tmp.path);
    second = b.path();
    b.scalar("time/fps", 200, 4096);
  }
  CHECK(first != second);
  const std::vector<ScalarEvent> got = read_tensorboard_scalars(tmp.path);
  REQUIRE(got.size() == 2);
  CHECK(got[0].step == 2048);
  CHECK(got[1].step == 4096);
}

TEST_CASE("tensorboard: a killed writer's file reads to its last complete record, a resume trims") {
  TempDir tmp("tensorboard_test");
  fs::path first;
  {
    TensorBoardWriter tb(tmp.path);
    first = tb.path();
    for (int64_t step = 64; step <= 320; step += 64) {
      tb.scalar("train/value_loss", 0.5, step);
      tb.scalar("time/fps", 100.0, step);
      tb.flush();
    }
  }
  // Killed mid-flush: the last record is cut short.
  const std::string good = read_all(first);
  write_all(first, good.substr(0, good.size() - 7));
  CHECK(error_of([&] { read_tensorboard_scalars(first); }).find("truncated record") !=
        std::string::npos);
  auto scalars = read_tensorboard_scalars(first, /*partial_tail_ok=*/true);
  REQUIRE(scalars.size() == 9);
  CHECK(scalars.back().step == 320);
  CHECK(scalars.back().tag == "train/value_loss");

  // The resume from the checkpoint at 192 keeps steps <= 192 and writes a new file from 256 on.
  trim_tensorboard_logs(tmp.path, 192);
  scalars = read_tensorboard_scalars(tmp.path);  // strict: no partial record is left
  REQUIRE(scalars.size() == 6);
  CHECK(scalars.back().step == 192);
  {
    TensorBoardWriter tb(tmp.path);
    tb.scalar("train/value_loss", 0.25, 256);
  }
  scalars = read_tensorboard_scalars(tmp.path);
  REQUIRE(scalars.size() == 7);
  CHECK(scalars.back().step == 256);
  CHECK(scalars.back().value == 0.25f);

  // A file with not even its file_version record goes; one with nothing after the step stays.
  write_all(tmp.path / "events.out.tfevents.1.host.1.0", "\x01\x02");
  trim_tensorboard_logs(tmp.path, 1000);
  CHECK_FALSE(fs::exists(tmp.path / "events.out.tfevents.1.host.1.0"));
  CHECK(read_tensorboard_scalars(tmp.path).size() == 7);
}
