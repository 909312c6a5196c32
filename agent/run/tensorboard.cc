#include "agent/run/tensorboard.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/crc.hpp>

#include "agent/run/csv_file.h"
#include "core/error.h"
#include "run/tensorboard_event.pb.h"  // generated into the build tree (agent/CMakeLists.txt)

namespace recur::agent {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFileVersion = "brain.Event:2";
constexpr size_t kHeaderBytes = 12;  // uint64 length + uint32 masked CRC of it
constexpr size_t kFooterBytes = 4;   // uint32 masked CRC of the data

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Fixed-width little-endian integers of the record framing (TFRecord's, independent of the host).
void store_le(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint64_t load_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

uint32_t masked_crc(const char* p, size_t n) {
  return mask_crc32c(crc32c({p, n}));
}

// Appends one framed record holding `event` to `out`; no allocation once `out` has the capacity.
void append_record(std::string& out, const tb::Event& event) {
  const size_t n = event.ByteSizeLong();
  const size_t at = out.size();
  out.resize(at + kHeaderBytes + n + kFooterBytes);
  char* p = out.data() + at;
  store_le(p, n, 8);
  store_le(p + 8, masked_crc(p, 8), 4);
  event.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p + kHeaderBytes));
  store_le(p + kHeaderBytes + n, masked_crc(p + kHeaderBytes, n), 4);
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::move(ss).str();
}

// Walks the records of one event file, calling on_event(offset, event) for each complete one.
// Returns the offset just past the last complete record: bytes.size() unless the file ends in a
// partial record, which throws unless `partial_tail_ok`. A bad CRC or Event always throws.
template <typename OnEvent>
size_t scan_records(const fs::path& path, const std::string& bytes, bool partial_tail_ok,
                    OnEvent&& on_event) {
  tb::Event event;
  size_t pos = 0;
  for (int64_t index = 0; pos < bytes.size(); ++index) {
    const char* p = bytes.data() + pos;
    const size_t left = bytes.size() - pos;
    if (left < kHeaderBytes && partial_tail_ok) return pos;
    RECUR_CHECK(left >= kHeaderBytes,
                "{}: truncated record at byte {}: {} byte(s) left, a record header takes {}",
                path.string(), pos, left, kHeaderBytes);
    RECUR_CHECK(load_le(p + 8, 4) == masked_crc(p, 8),
                "{}: bad CRC of the length of the record at byte {} (a corrupt event file)",
                path.string(), pos);
    const uint64_t n = load_le(p, 8);
    const size_t after_header = left - kHeaderBytes;
    const bool whole = n <= after_header && after_header - n >= kFooterBytes;
    if (!whole && partial_tail_ok) return pos;
    RECUR_CHECK(whole,
                "{}: truncated record at byte {}: it holds {} byte(s) of data and a 4-byte CRC, "
                "but only {} byte(s) follow its header",
                path.string(), pos, n, after_header);
    const char* data = p + kHeaderBytes;
    RECUR_CHECK(load_le(data + n, 4) == masked_crc(data, n),
                "{}: bad CRC of the data of the record at byte {} (a corrupt event file)",
                path.string(), pos);
    RECUR_CHECK(event.ParseFromArray(data, static_cast<int>(n)),
                "{}: the record at byte {} is not an Event protobuf", path.string(), pos);
    RECUR_CHECK(index > 0 || event.what_case() == tb::Event::kFileVersion,
                "{}: not a TensorBoard event file: the first record (byte 0) holds no "
                "file_version",
                path.string());
    on_event(pos, event);
    pos += kHeaderBytes + n + kFooterBytes;
  }
  return pos;
}

void read_file(const fs::path& path, bool partial_tail_ok, std::vector<ScalarEvent>& out) {
  scan_records(path, read_bytes(path), partial_tail_ok, [&](size_t, const tb::Event& event) {
    if (event.what_case() == tb::Event::kSummary) {
      for (const tb::Summary::Value& v : event.summary().value())
        if (v.value_case() == tb::Summary::Value::kSimpleValue)
          out.push_back({v.tag(), event.step(), event.wall_time(), v.simple_value()});
    }
  });
}

bool is_event_file(const fs::directory_entry& e) {
  return e.is_regular_file() && e.path().filename().string().find("tfevents") != std::string::npos;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

uint32_t mask_crc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

struct TensorBoardWriter::Impl {
  fs::path path;
  detail::File file;
  tb::Event event;     // reused by every scalar: one Summary.Value whose tag and value change
  std::string buffer;  // whole records not yet written; keeps its capacity across flushes
};

TensorBoardWriter::TensorBoardWriter(const fs::path& dir) : impl_(std::make_unique<Impl>()) {
  static std::atomic<int64_t> writers{0};
  std::error_code ec;
  fs::create_directories(dir, ec);
  RECUR_CHECK(!ec, "cannot create the TensorBoard directory {}: {}", dir.string(), ec.message());

  const double now = unix_now();
  impl_->path = dir / fmt::format("events.out.tfevents.{:010d}.{}.{}.{}", static_cast<int64_t>(now),
                                  host_name(), ::getpid(), writers++);
  // "x": never append to or truncate a file that is there (the name is unique to this writer).
  impl_->file.reset(std::fopen(impl_->path.c_str(), "wbx"));
  if (!impl_->file)
    throw Error(fmt::format("cannot create {}: {}", impl_->path.string(), std::strerror(errno)));

  tb::Event version;
  version.set_wall_time(now);
  version.set_step(0);
  version.set_file_version(std::string(kFileVersion));
  append_record(impl_->buffer, version);
  try {
    flush();
  } catch (...) {
    // A full disk: no empty or partial event file is left behind.
    impl_->file.reset();
    fs::remove(impl_->path, ec);
    throw;
  }

  impl_->event.mutable_summary()->add_value();
}

TensorBoardWriter::~TensorBoardWriter() {
  if (!impl_) return;  // moved from
  try {
    flush();
  } catch (const std::exception& e) {
    spdlog::warn("TensorBoard: the last scalars were lost: {}", e.what());
  }
}

TensorBoardWriter::TensorBoardWriter(TensorBoardWriter&&) noexcept = default;
TensorBoardWriter& TensorBoardWriter::operator=(TensorBoardWriter&&) noexcept = default;

void TensorBoardWriter::scalar(std::string_view tag, double value, int64_t step) {
  tb::Event& event = impl_->event;
  event.set_wall_time(unix_now());
  event.set_step(step);
  tb::Summary::Value* v = event.mutable_summary()->mutable_value(0);
  v->mutable_tag()->assign(tag);  // reuses the string's capacity (set_tag would build a new one)
  v->set_simple_value(static_cast<float>(value));
  append_record(impl_->buffer, event);
}

void TensorBoardWriter::flush() {
  if (!impl_->buffer.empty()) {
    detail::append(impl_->file.get(), impl_->buffer, impl_->path);  // fwrite + fflush
    impl_->buffer.clear();
  }
}

const fs::path& TensorBoardWriter::path() const {
  return impl_->path;
}

std::vector<ScalarEvent> read_tensorboard_scalars(const fs::path& file_or_dir,
                                                  bool partial_tail_ok) {
  std::error_code ec;
  if (!fs::is_directory(file_or_dir, ec)) {
    RECUR_CHECK(fs::exists(file_or_dir, ec), "no TensorBoard event file or directory at {}",
                file_or_dir.string());
    std::vector<ScalarEvent> out;
    read_file(file_or_dir, partial_tail_ok, out);
    return out;
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(file_or_dir, ec))
    if (is_event_file(e)) files.push_back(e.path());
  RECUR_CHECK(!ec, "cannot list {}: {}", file_or_dir.string(), ec.message());
  if (files.empty() && fs::is_directory(file_or_dir / "tb", ec))
    return read_tensorboard_scalars(file_or_dir / "tb", partial_tail_ok);
  RECUR_CHECK(!files.empty(), "{} holds no TensorBoard event file (events.out.tfevents.*)",
              file_or_dir.string());
  std::sort(files.begin(), files.end());
  std::vector<ScalarEvent> out;
  for (const fs::path& f : files) read_file(f, partial_tail_ok, out);
  return out;
}

void trim_tensorboard_logs(const fs::path& dir, int64_t last_step) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (is_event_file(e)) files.push_back(e.path());
  RECUR_CHECK(!ec, "cannot list {}: {}", dir.string(), ec.message());
  for (const fs::path& f : files) {
    const std::string bytes = read_bytes(f);
    size_t cut = std::string::npos;
    int64_t dropped = 0;
    const size_t complete = scan_records(f, bytes, true, [&](size_t at, const tb::Event& event) {
      if (event.what_case() == tb::Event::kFileVersion || event.step() <= last_step) return;
      if (cut == std::string::npos) cut = at;  // steps only grow within a file
      ++dropped;
    });
    cut = std::min(cut, complete);
    if (cut == bytes.size()) continue;
    if (cut == 0) {
      fs::remove(f, ec);  // not even its file_version record was written
      RECUR_CHECK(!ec, "cannot remove {}: {}", f.string(), ec.message());
      continue;
    }
    fs::resize_file(f, cut, ec);
    RECUR_CHECK(!ec, "cannot truncate {}: {}", f.string(), ec.message());
    spdlog::info("{}: dropped {} record(s) logged after env step {}{}", f.string(), dropped,
                 last_step, complete < bytes.size() ? " and a partial last record" : "");
  }
}

}  // namespace recur::agent
