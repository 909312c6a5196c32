#include "policy/checkpoint.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"

namespace recur::policy {
namespace {

namespace fs = std::filesystem;

Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.tensors["core.weight_ih_l0"] = Tensor({4, 3}, {});
  for (int i = 0; i < 12; ++i)
    c.tensors["core.weight_ih_l0"].data.push_back(static_cast<float>(i) * 0.25f - 1.0f);
  // Values whose bits a careless conversion would change: -0, a NaN payload, infinities,
  // a denormal.
  const uint32_t nan_bits = 0x7fc01234u;
  float nan_payload;
  std::memcpy(&nan_payload, &nan_bits, sizeof(float));
  c.tensors["actor.bias"] = Tensor(
      {5}, {-0.0f, nan_payload, std::numeric_limits<float>::infinity(),
            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()});
  c.tensors["log_std"] = Tensor({}, {0.5f});  // a scalar
  c.tensors["empty"] = Tensor({0}, {});
  c.tensors["empty_2d"] = Tensor({3, 0}, {});
  c.metadata = {{"format", "recur"}, {"step", "12345"}, {"note", "quote \" and \\ and \n ünï"}};
  return c;
}

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (const float x : v) out.push_back(std::bit_cast<uint32_t>(x));
  return out;
}

// operator== says NaN != NaN; checkpoints must round-trip bits.
void check_bit_equal(const Checkpoint& a, const Checkpoint& b) {
  CHECK(a.metadata == b.metadata);
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (auto ia = a.tensors.begin(), ib = b.tensors.begin(); ia != a.tensors.end(); ++ia, ++ib) {
    CAPTURE(ia->first);
    CHECK(ia->first == ib->first);
    CHECK(ia->second.shape == ib->second.shape);
    CHECK(bits(ia->second.data) == bits(ib->second.data));
  }
}

std::string le_u64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A file from a hand-written header and data area.
std::string file_with(const std::string& header, size_t data_bytes = 0) {
  return le_u64(header.size()) + header + std::string(data_bytes, '\x01');
}

std::string parse_error(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "bad.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            fmt::format("recur_checkpoint_test_{}_{}", ::getpid(), counter++);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

TEST_CASE("checkpoint round trip is bit exact") {
  const Checkpoint c = sample_checkpoint();
  check_bit_equal(parse_safetensors(serialize_safetensors(c), "memory"), c);

  Checkpoint bare;  // no tensors and no metadata
  CHECK(parse_safetensors(serialize_safetensors(bare), "memory") == bare);
}

TEST_CASE("checkpoint serialization is deterministic and follows the safetensors layout") {
  Checkpoint c;
  c.tensors["b"] = Tensor({2}, {1.0f, 2.0f});
  c.tensors["a"] = Tensor({}, {3.0f});
  c.metadata["k"] = "v";
  const std::string bytes = serialize_safetensors(c);
  CHECK(bytes == serialize_safetensors(c));

  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
  CHECK((8 + n) % 8 == 0);  // data 8-byte aligned
  const std::string json =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  const std::string header = bytes.substr(8, n);
  CHECK(header.substr(0, json.size()) == json);
  CHECK(header.find_first_not_of(' ', json.size()) == std::string::npos);
  REQUIRE(bytes.size() == 8 + n + 12);
  const float expected[3] = {3.0f, 1.0f, 2.0f};  // tensors in name order, no gaps
  CHECK(std::memcmp(bytes.data() + 8 + n, expected, sizeof(expected)) == 0);
}

TEST_CASE("serializing an inconsistent checkpoint is rejected") {
  Checkpoint c;
  c.tensors["a"] = Tensor({2, 2}, {1.0f});
  CHECK_THROWS_AS(serialize_safetensors(c), std::invalid_argument);
  Checkpoint m;
  m.tensors["__metadata__"] = Tensor({}, {1.0f});
  CHECK_THROWS_AS(serialize_safetensors(m), std::invalid_argument);
  Checkpoint u;
  u.metadata["bad utf8 \xff"] = "x";
  CHECK_THROWS_AS(serialize_safetensors(u), std::invalid_argument);
}

TEST_CASE("save_checkpoint is atomic and overwrites") {
  TempDir dir;
  const fs::path path = dir.path() / "policy.safetensors";
  Checkpoint first = sample_checkpoint();
  // load_checkpoint refuses NaN and infinity (tested below): the special values that stay are
  // -0 and the denormal.
  first.tensors["actor.bias"].data[1] = std::numeric_limits<float>::max();
  first.tensors["actor.bias"].data[2] = -std::numeric_limits<float>::max();
  first.tensors["actor.bias"].data[3] = std::numeric_limits<float>::min();
  save_checkpoint(path, first);
  check_bit_equal(load_checkpoint(path), first);
  CHECK(dir.listing() == std::vector<std::string>{"policy.safetensors"});

  Checkpoint second;
  second.tensors["x"] = Tensor({3}, {1.0f, 2.0f, 3.0f});
  save_checkpoint(path, second);
  CHECK(load_checkpoint(path) == second);
  CHECK(dir.listing() == std::vector<std::string>{"policy.safetensors"});
}

TEST_CASE("save_checkpoint into a missing directory fails clearly") {
  TempDir dir;
  const fs::path path = dir.path() / "missing" / "policy.safetensors";
  try {
    save_checkpoint(path, sample_checkpoint());
    FAIL("saving into a missing directory succeeded");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("does not exist") != std::string::npos);
    CHECK(what.find((dir.path() / "missing").string()) != std::string::npos);
  }
  CHECK(dir.listing().empty());
}

TEST_CASE("a failed save removes its temporary file") {
  TempDir dir;
  // rename() cannot replace a non-empty directory, so the save fails after writing the temp file.
  const fs::path path = dir.path() / "taken";
  fs::create_directories(path / "inside");
  try {
    save_checkpoint(path, sample_checkpoint());
    FAIL("saving over a directory succeeded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
  }
  CHECK(dir.listing() == std::vector<std::string>{"taken"});
}

TEST_CASE("load_checkpoint refuses a NaN or an infinity, naming the tensor and the element") {
  TempDir dir;
  const fs::path path = dir.path() / "diverged.safetensors";
  Checkpoint c = sample_checkpoint();  // actor.bias holds a NaN at index 1, then infinities
  save_checkpoint(path, c);            // the generic writer keeps any bits; the loader judges
  CHECK_THROWS_WITH_AS(
      load_checkpoint(path),
      doctest::Contains((path.string() + R"(: tensor "actor.bias" holds a non-finite value (nan) )"
                                         "at index 1;")
                            .c_str()),
      Error);

  c.tensors.erase("actor.bias");
  c.tensors["core.weight_ih_l0"].data[7] = -std::numeric_limits<float>::infinity();
  save_checkpoint(path, c);
  CHECK_THROWS_WITH_AS(load_checkpoint(path),
                       doctest::Contains(R"(tensor "core.weight_ih_l0" holds a non-finite value )"
                                         "(-inf) at index 7 = [2, 1] of shape [4, 3]; the file is "
                                         "damaged"),
                       Error);

  c.tensors["core.weight_ih_l0"].data[7] = 1.0f;
  save_checkpoint(path, c);
  CHECK(load_checkpoint(path) == c);  // finite again: loads
}

TEST_CASE("load_checkpoint names the file it cannot read") {
  TempDir dir;
  const fs::path missing = dir.path() / "nope.safetensors";
  CHECK_THROWS_WITH_AS(
      load_checkpoint(missing),
      doctest::Contains((missing.string() + ": No such file or directory").c_str()), Error);
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.path()), doctest::Contains("not a regular file"), Error);

  const fs::path bad = dir.path() / "bad.safetensors";
  std::ofstream(bad) << "tiny";
  CHECK_THROWS_WITH_AS(load_checkpoint(bad),
                       doctest::Contains((bad.string() + ": file is 4 bytes").c_str()), Error);
}

TEST_CASE("malformed safetensors files are rejected with specific messages") {
  const std::string a1 = R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  const std::string deep(100000, '[');
  std::string many_dims = "1";
  for (int i = 1; i < 65; ++i) many_dims += ",1";
  struct Case {
    std::string name;
    std::string bytes;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"shorter than 8 bytes", "abc", "file is 3 bytes, shorter than the 8-byte header length"},
      {"header longer than the file", le_u64(100) + "{}", "header length 100 exceeds the 2 bytes"},
      {"absurd header length", le_u64(uint64_t{1} << 40) + "{}",
       "header length 1099511627776 is absurd"},
      {"header not starting with a brace", file_with("[1]"), "header is not a JSON object"},
      {"empty header", file_with(""), "header is not a JSON object"},
      {"invalid JSON", file_with(R"({"a":{"dtype":"F32",)"),
       "header is not valid JSON: parse error at line 1, column 21"},
      {"garbage after the JSON", file_with("{} x"), "header is not valid JSON"},
      {"entry not an object", file_with(R"({"a":5})"),
       "entry \"a\" must be an object with dtype, shape and data_offsets, found the number 5"},
      {"unsupported dtype",
       file_with(R"({"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", 2),
       "tensor \"a\" has dtype \"F16\", which recur does not load: checkpoints must be F32"},
      {"unknown dtype", file_with(R"({"a":{"dtype":"float","shape":[],"data_offsets":[0,4]}})", 4),
       "tensor \"a\" has unknown dtype \"float\" (expected \"F32\")"},
      {"dtype not a string", file_with(R"({"a":{"dtype":32}})"),
       "dtype of tensor \"a\" must be a string, found the number 32"},
      {"shape not an array", file_with(R"({"a":{"dtype":"F32","shape":"1"}})"),
       "shape of tensor \"a\" must be an array of non-negative integers, found a string"},
      {"negative dimension", file_with(R"({"a":{"dtype":"F32","shape":[-1]}})"),
       "found the negative number -1 in it"},
      {"fractional dimension", file_with(R"({"a":{"dtype":"F32","shape":[1.5]}})"),
       "found the non-integer number 1.5 in it"},
      {"dimension beyond int64",
       file_with(R"({"a":{"dtype":"F32","shape":[9223372036854775808]}})"),
       "has dimension 9223372036854775808, larger than 2^63 - 1"},
      {"too many dimensions", file_with(R"({"a":{"dtype":"F32","shape":[)" + many_dims + "]}}"),
       "shape of tensor \"a\" has more than 64 dimensions"},
      {"byte size overflow",
       file_with(R"({"a":{"dtype":"F32","shape":[4611686018427387904,0],"data_offsets":[0,0]}})"),
       "the byte size of tensor \"a\" with shape [4611686018427387904, 0] overflows"},
      {"offsets with one number",
       file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})"),
       "data_offsets of tensor \"a\" must be [begin, end], found an array of length 1"},
      {"offsets with three numbers",
       file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})"),
       "found more than two numbers"},
      {"offsets not integers",
       file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,"4"]}})"),
       "must be [begin, end] with non-negative integers, found a string in it"},
      {"begin after end", file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8),
       "data_offsets [8, 4] of tensor \"a\" have begin > end"},
      {"offsets disagree with the shape",
       file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4),
       "tensor \"a\" has shape [2] (8 bytes of F32) but data_offsets [0, 4] span 4 bytes"},
      {"offsets outside the data area", file_with("{" + a1 + "}", 2),
       "data_offsets [0, 4] of tensor \"a\" lie outside the data area of 2 bytes"},
      {"overlapping tensors",
       file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                 8),
       "tensors \"a\" [0, 8) and \"b\" [4, 8) overlap in the data area"},
      {"empty tensor inside another",
       file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                 R"("b":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
                 8),
       "overlap in the data area"},
      {"gap between tensors",
       file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                 R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                 12),
       "bytes [4, 8) of the data area belong to no tensor"},
      {"unused bytes at the end", file_with("{" + a1 + "}", 9),
       "bytes [4, 9) at the end of the data area belong to no tensor"},
      {"data but no tensors", file_with("{}", 4),
       "bytes [0, 4) at the end of the data area belong to no tensor"},
      {"duplicate tensor name", file_with("{" + a1 + "," + a1 + "}", 4),
       "tensor \"a\" appears twice in the header"},
      {"duplicate field", file_with(R"({"a":{"shape":[1],"shape":[1]}})"),
       "tensor \"a\" has \"shape\" twice"},
      {"unknown field", file_with(R"({"a":{"dtypes":"F32"}})"), "unknown field \"dtypes\""},
      {"missing field", file_with(R"({"a":{"dtype":"F32","shape":[1]}})", 4),
       "tensor \"a\" has no data_offsets"},
      {"metadata not an object", file_with(R"({"__metadata__":["k","v"]})"),
       "\"__metadata__\" must be an object of string values, found an array"},
      {"metadata value not a string", file_with(R"({"__metadata__":{"k":1}})"),
       "metadata value of key \"k\" must be a string, found the number 1"},
      {"duplicate metadata key", file_with(R"({"__metadata__":{"k":"v","k":"w"}})"),
       "metadata key \"k\" appears twice"},
      {"duplicate metadata", file_with(R"({"__metadata__":{},"__metadata__":{}})"),
       "\"__metadata__\" appears twice in the header"},
      {"deep nesting in a shape", file_with(R"({"a":{"shape":[)" + deep),
       "shape of tensor \"a\" must be an array of non-negative integers, found an array in it"},
      {"deep nesting as an entry", file_with(R"({"a":)" + deep),
       "entry \"a\" must be an object with dtype, shape and data_offsets, found an array"},
      {"deep nesting in metadata", file_with(R"({"__metadata__":{"k":{"k":{"k":)"),
       "metadata value of key \"k\" must be a string, found an object"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string what = parse_error(c.bytes);
    CHECK_MESSAGE(what.rfind("bad.safetensors: ", 0) == 0, what);
    CHECK_MESSAGE(what.find(c.fragment) != std::string::npos, what);
  }
}

TEST_CASE("long and odd names in error messages are escaped and shortened") {
  const std::string name = "\x01" + std::string(500, 'n');
  const std::string what = parse_error(file_with("{\"\\u0001" + name.substr(1) + "\":5}"));
  CHECK(what.find("\"\\u0001nnn") != std::string::npos);
  CHECK(what.find("...") != std::string::npos);
  CHECK(what.size() < 250);

  const std::string unterminated = parse_error(file_with("{\"" + std::string(100000, 'x')));
  CHECK(unterminated.find("header is not valid JSON") != std::string::npos);
  CHECK(unterminated.size() < 400);
}

// Mutations of a valid file must parse or throw recur::Error, never crash or throw anything
// else; what parses must serialize and parse back to itself.
TEST_CASE("mutated checkpoints parse or throw recur::Error") {
  const std::string valid = serialize_safetensors(sample_checkpoint());
  Rng rng(20240611);
  const auto pos = [&](size_t size) { return static_cast<size_t>(rng.uniform_int(size)); };
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 10000; ++iter) {
    std::string bytes = valid;
    const int mutations = 1 + static_cast<int>(rng.uniform_int(3));
    for (int m = 0; m < mutations && !bytes.empty(); ++m) {
      switch (rng.uniform_int(6)) {
        case 0:  // bit flip
          bytes[pos(bytes.size())] ^= static_cast<char>(1 << rng.uniform_int(8));
          break;
        case 1: {  // a byte the parser cares about
          static constexpr char kBytes[] = {'\0', '\xff', '[', '{', '"', ',', '9', '-', ' '};
          bytes[pos(bytes.size())] = kBytes[rng.uniform_int(sizeof(kBytes))];
          break;
        }
        case 2:  // truncation
          bytes.resize(pos(bytes.size()));
          break;
        case 3: {  // header length edit
          if (bytes.size() < 8) break;
          uint64_t n = 0;
          std::memcpy(&n, bytes.data(), 8);
          const uint64_t choices[] = {n + 1,
                                      n - 1,
                                      n + 8,
                                      n - 8,
                                      rng.next_u64(),
                                      rng.uniform_int(bytes.size() + 16),
                                      uint64_t{1} << 63};
          const std::string len = le_u64(choices[rng.uniform_int(std::size(choices))]);
          bytes.replace(0, 8, len);
          break;
        }
        case 4: {  // splice: copy a chunk of the file over another place
          const size_t from = pos(bytes.size());
          const size_t count = pos(bytes.size() - from) + 1;
          const std::string chunk = bytes.substr(from, count);
          const size_t to = pos(bytes.size());
          bytes.replace(to, std::min(count, bytes.size() - to), chunk);
          break;
        }
        default: {  // insert or erase a chunk
          const size_t at = pos(bytes.size());
          const size_t count = pos(std::min<size_t>(bytes.size() - at, 32)) + 1;
          if (rng.uniform_int(2)) {
            bytes.insert(at, bytes.substr(pos(bytes.size()), count));
          } else {
            bytes.erase(at, count);
          }
        }
      }
    }
    try {
      const Checkpoint c = parse_safetensors(bytes, "mutant");
      check_bit_equal(parse_safetensors(serialize_safetensors(c), "reserialized"), c);
      ++parsed;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL("mutation ", iter, " threw a non-recur::Error: ", e.what());
    }
  }
  // Both outcomes occur, or the mutations test nothing.
  CHECK(parsed > 50);
  CHECK(rejected > 1000);
}

}  // namespace
}  // namespace recur::policy
