// parse_safetensors: the loader's validation. Everything in the file is untrusted until checked
// against the bytes actually present; see checkpoint.h for what is checked.
#include "policy/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "core/error.h"
#include "policy/safetensors_format.h"

namespace recur::policy {
namespace {

using namespace safetensors;

// numpy's limit (NPY_MAXDIMS); it also bounds what one entry of a hostile header can allocate.
constexpr size_t kMaxRank = 64;

bool known_dtype(std::string_view dtype) {
  static constexpr std::string_view kDtypes[] = {
      "BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16", "F16",
      "BF16", "I32", "U32", "F32",     "F64",     "I64",     "U64", "C64", "F4"};
  return std::find(std::begin(kDtypes), std::end(kDtypes), dtype) != std::end(kDtypes);
}

// One tensor entry of the header as read, before its bytes are trusted.
struct Entry {
  bool has_dtype = false;
  bool has_shape = false;
  bool has_offsets = false;
  std::vector<int64_t> shape;
  std::vector<uint64_t> offsets;  // [begin, end) relative to the data area
};

// Reads the JSON header as nlohmann's SAX events and checks its structure on the way. The
// accepted grammar is at most three levels deep (header object, entry object, shape array), so
// deeper nesting is rejected on its first level, and a hostile header cannot exhaust the stack
// (nlohmann's SAX parser is iterative too). No document tree is built beside the result.
class HeaderReader {
 public:
  HeaderReader(const std::string& source, uint64_t data_bytes)
      : source_(source), data_bytes_(data_bytes) {}

  std::map<std::string, Entry>& entries() { return entries_; }
  std::map<std::string, std::string>& metadata() { return metadata_; }
  bool complete() const { return where_ == Where::kDone; }
  void check_coverage() const;

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(fmt::format("{}: {}", source_, fmt::format(format, std::forward<Args>(args)...)));
  }

  // The SAX interface (nlohmann::json_sax).
  bool null() { unexpected("null"); }
  bool boolean(bool) { unexpected("a boolean"); }
  bool number_integer(Json::number_integer_t v) {
    if (v < 0) unexpected(fmt::format("the negative number {}", v));
    return integer(static_cast<uint64_t>(v));
  }
  bool number_unsigned(Json::number_unsigned_t v) { return integer(v); }
  bool number_float(Json::number_float_t, const std::string& text) {
    unexpected(fmt::format("the non-integer number {}", text));
  }
  bool binary(Json::binary_t&) { unexpected("binary data"); }
  bool string(std::string& s);
  bool start_object(size_t);
  bool key(std::string& k);
  bool end_object();
  bool start_array(size_t);
  bool end_array();
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    // nlohmann's message ("[json.exception.parse_error.101] parse error at line 1, column 21:
    // ...") already says where; drop its internal id. It quotes the token it last read, which a
    // hostile header can make megabytes long: keep the message to a line or two.
    constexpr size_t kMaxShown = 300;
    std::string what = e.what();
    const size_t cut = what.find("] ");
    if (cut != std::string::npos) what.erase(0, cut + 2);
    if (what.size() > kMaxShown) what = what.substr(0, kMaxShown) + "...";
    fail("header is not valid JSON: {}", what);
  }

 private:
  enum class Where { kStart, kHeader, kMetadata, kEntry, kShape, kOffsets, kDone };
  enum class Field { kNone, kDtype, kShape, kOffsets };

  [[noreturn]] void unexpected(std::string_view found) const;
  bool integer(uint64_t v);
  void finish_entry();

  const std::string& source_;
  const uint64_t data_bytes_;
  Where where_ = Where::kStart;
  Field field_ = Field::kNone;
  std::string name_;          // the entry being read (or "__metadata__")
  std::string metadata_key_;  // the metadata value being read
  Entry* entry_ = nullptr;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
  bool seen_metadata_ = false;
};

void HeaderReader::unexpected(std::string_view found) const {
  switch (where_) {
    case Where::kStart:
      fail("header is not a JSON object (found {})", found);
    case Where::kHeader:
      if (name_ == kMetadataKey)
        fail("\"__metadata__\" must be an object of string values, found {}", found);
      fail("entry {} must be an object with dtype, shape and data_offsets, found {}",
           json_quoted(name_), found);
    case Where::kMetadata:
      fail("metadata value of key {} must be a string, found {}", json_quoted(metadata_key_),
           found);
    case Where::kEntry:
      if (field_ == Field::kDtype)
        fail("dtype of tensor {} must be a string, found {}", json_quoted(name_), found);
      if (field_ == Field::kShape)
        fail("shape of tensor {} must be an array of non-negative integers, found {}",
             json_quoted(name_), found);
      fail("data_offsets of tensor {} must be an array [begin, end], found {}", json_quoted(name_),
           found);
    case Where::kShape:
      fail("shape of tensor {} must be an array of non-negative integers, found {} in it",
           json_quoted(name_), found);
    case Where::kOffsets:
      fail(
          "data_offsets of tensor {} must be [begin, end] with non-negative integers, found {} "
          "in it",
          json_quoted(name_), found);
    case Where::kDone:
      break;
  }
  RECUR_ASSERT(false);  // a strict parser sends nothing after the header's closing brace
}

bool HeaderReader::integer(uint64_t v) {
  if (where_ == Where::kShape) {
    if (entry_->shape.size() == kMaxRank)
      fail("shape of tensor {} has more than {} dimensions", json_quoted(name_), kMaxRank);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("shape of tensor {} has dimension {}, larger than 2^63 - 1", json_quoted(name_), v);
    entry_->shape.push_back(static_cast<int64_t>(v));
    return true;
  }
  if (where_ == Where::kOffsets) {
    if (entry_->offsets.size() == 2)
      fail("data_offsets of tensor {} must be [begin, end], found more than two numbers",
           json_quoted(name_));
    entry_->offsets.push_back(v);
    return true;
  }
  unexpected(fmt::format("the number {}", v));
}

bool HeaderReader::string(std::string& s) {
  if (where_ == Where::kMetadata) {
    metadata_.emplace(metadata_key_, std::move(s));
    return true;
  }
  if (where_ != Where::kEntry || field_ != Field::kDtype) unexpected("a string");
  if (s != "F32") {
    if (known_dtype(s))
      fail("tensor {} has dtype {}, which recur does not load: checkpoints must be F32",
           json_quoted(name_), json_quoted(s));
    fail("tensor {} has unknown dtype {} (expected \"F32\")", json_quoted(name_), json_quoted(s));
  }
  return true;
}

bool HeaderReader::start_object(size_t) {
  if (where_ == Where::kStart) {
    where_ = Where::kHeader;
  } else if (where_ == Where::kHeader && name_ == kMetadataKey) {
    where_ = Where::kMetadata;
  } else if (where_ == Where::kHeader) {
    // name_ was checked for duplicates in key(), so this inserts.
    entry_ = &entries_[name_];
    where_ = Where::kEntry;
    field_ = Field::kNone;
  } else {
    unexpected("an object");
  }
  return true;
}

bool HeaderReader::key(std::string& k) {
  switch (where_) {
    case Where::kHeader:
      if (k == kMetadataKey) {
        if (seen_metadata_) fail("\"__metadata__\" appears twice in the header");
        seen_metadata_ = true;
      } else if (entries_.count(k)) {
        fail("tensor {} appears twice in the header", json_quoted(k));
      }
      name_ = std::move(k);
      return true;
    case Where::kMetadata:
      if (metadata_.count(k)) fail("metadata key {} appears twice", json_quoted(k));
      metadata_key_ = std::move(k);
      return true;
    case Where::kEntry: {
      bool* seen = nullptr;
      if (k == "dtype") {
        field_ = Field::kDtype;
        seen = &entry_->has_dtype;
      } else if (k == "shape") {
        field_ = Field::kShape;
        seen = &entry_->has_shape;
      } else if (k == "data_offsets") {
        field_ = Field::kOffsets;
        seen = &entry_->has_offsets;
      } else {
        fail("tensor {} has unknown field {} (expected dtype, shape and data_offsets)",
             json_quoted(name_), json_quoted(k));
      }
      if (*seen) fail("tensor {} has {} twice", json_quoted(name_), json_quoted(k));
      *seen = true;
      return true;
    }
    default:
      RECUR_ASSERT(false);  // keys only come inside objects, and only these three are accepted
  }
  return false;
}

bool HeaderReader::end_object() {
  if (where_ == Where::kMetadata) {
    where_ = Where::kHeader;
  } else if (where_ == Where::kEntry) {
    finish_entry();
    where_ = Where::kHeader;
  } else {
    RECUR_ASSERT(where_ == Where::kHeader);
    where_ = Where::kDone;
  }
  return true;
}

bool HeaderReader::start_array(size_t) {
  if (where_ != Where::kEntry || field_ == Field::kDtype) unexpected("an array");
  where_ = field_ == Field::kShape ? Where::kShape : Where::kOffsets;
  return true;
}

bool HeaderReader::end_array() {
  RECUR_ASSERT(where_ == Where::kShape || where_ == Where::kOffsets);
  if (where_ == Where::kOffsets && entry_->offsets.size() != 2)
    fail("data_offsets of tensor {} must be [begin, end], found an array of length {}",
         json_quoted(name_), entry_->offsets.size());
  where_ = Where::kEntry;
  return true;
}

// Checks one entry on its own: complete, a byte size that fits 64 bits, offsets that span
// exactly that size inside the data area. How entries fit together is checked afterwards.
void HeaderReader::finish_entry() {
  const Entry& e = *entry_;
  const std::string name = json_quoted(name_);
  if (!e.has_dtype) fail("tensor {} has no dtype", name);
  if (!e.has_shape) fail("tensor {} has no shape", name);
  if (!e.has_offsets) fail("tensor {} has no data_offsets", name);
  const auto bytes = f32_bytes(e.shape);
  if (!bytes)
    fail("the byte size of tensor {} with shape [{}] overflows", name, fmt::join(e.shape, ", "));
  const uint64_t begin = e.offsets[0], end = e.offsets[1];
  if (begin > end) fail("data_offsets [{}, {}] of tensor {} have begin > end", begin, end, name);
  if (end - begin != *bytes)
    fail("tensor {} has shape [{}] ({} bytes of F32) but data_offsets [{}, {}] span {} bytes", name,
         fmt::join(e.shape, ", "), *bytes, begin, end, end - begin);
  if (end > data_bytes_)
    fail("data_offsets [{}, {}] of tensor {} lie outside the data area of {} bytes", begin, end,
         name, data_bytes_);
}

// The spec requires the tensors to tile the data area: sorted by offset, each begins where the
// previous one ended and the last ends at the end of the file.
void HeaderReader::check_coverage() const {
  std::vector<std::pair<const std::string*, const Entry*>> order;
  order.reserve(entries_.size());
  for (const auto& [name, e] : entries_) order.emplace_back(&name, &e);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.second->offsets < b.second->offsets; });
  uint64_t covered = 0;
  const std::pair<const std::string*, const Entry*>* previous = nullptr;
  for (const auto& item : order) {
    const uint64_t begin = item.second->offsets[0];
    if (begin < covered)
      fail("tensors {} [{}, {}) and {} [{}, {}) overlap in the data area",
           json_quoted(*previous->first), previous->second->offsets[0],
           previous->second->offsets[1], json_quoted(*item.first), begin, item.second->offsets[1]);
    if (begin > covered)
      fail("bytes [{}, {}) of the data area belong to no tensor (gaps are not allowed)", covered,
           begin);
    covered = item.second->offsets[1];
    previous = &item;
  }
  if (covered != data_bytes_)
    fail("bytes [{}, {}) at the end of the data area belong to no tensor", covered, data_bytes_);
}

uint64_t read_le_u64(std::string_view bytes) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  return v;
}

}  // namespace

Checkpoint parse_safetensors(std::string_view bytes, const std::string& source) {
  RECUR_CHECK(bytes.size() >= kLengthBytes,
              "{}: file is {} bytes, shorter than the 8-byte header length of a safetensors "
              "file",
              source, bytes.size());
  const uint64_t header_bytes = read_le_u64(bytes);
  const uint64_t rest = bytes.size() - kLengthBytes;
  RECUR_CHECK(header_bytes <= kMaxHeaderBytes,
              "{}: header length {} is absurd (limit {} bytes); the file is corrupt or not "
              "safetensors",
              source, header_bytes, kMaxHeaderBytes);
  RECUR_CHECK(header_bytes <= rest,
              "{}: header length {} exceeds the {} bytes that follow it; the file is truncated "
              "or corrupt",
              source, header_bytes, rest);
  const std::string_view header = bytes.substr(kLengthBytes, header_bytes);
  RECUR_CHECK(!header.empty() && header.front() == '{',
              "{}: header is not a JSON object (it must start with '{{')", source);

  const uint64_t data_bytes = rest - header_bytes;
  HeaderReader reader(source, data_bytes);
  Json::sax_parse(header.begin(), header.end(), &reader);
  RECUR_ASSERT(reader.complete());  // a successful strict parse ends with the closing brace
  reader.check_coverage();

  // Every size below was checked against the bytes present, so these allocations are bounded
  // by the file.
  const std::string_view data = bytes.substr(kLengthBytes + header_bytes);
  Checkpoint checkpoint;
  checkpoint.metadata = std::move(reader.metadata());
  for (auto& [name, e] : reader.entries()) {
    const uint64_t begin = e.offsets[0], end = e.offsets[1];
    Tensor t;
    t.shape = std::move(e.shape);
    t.data.resize((end - begin) / sizeof(float));
    // An empty vector's data() may be null, which memcpy may not be given even for 0 bytes.
    if (end > begin) std::memcpy(t.data.data(), data.data() + begin, end - begin);
    checkpoint.tensors.emplace(name, std::move(t));
  }
  return checkpoint;
}

}  // namespace recur::policy
