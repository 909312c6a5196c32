// TensorBoard event files: scalars written so that `tensorboard --logdir` shows a run's curves, and
// read back (tests, tools).
//
// A file is a sequence of TFRecords, each
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data[length] |
//   uint32 masked_crc32c(data)
// where data is a serialized Event (agent/run/tensorboard_event.proto, TensorFlow's field
// numbers), masked_crc32c(x) = ((c >> 15) | (c << 17)) + 0xa282ead8 with c = CRC-32C (Castagnoli)
// of x. The first record of a file is an Event whose file_version is "brain.Event:2"; then one
// Event per scalar (wall time, step, a Summary with one tagged simple_value), as PyTorch's
// SummaryWriter (and so Stable-Baselines3) writes them. recur uses env steps as the step axis.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace recur::agent {

class TensorBoardWriter {
 public:
  // Creates `dir` (and its parents) and a new file in it named as TensorFlow's and PyTorch's
  // writers name theirs, events.out.tfevents.<unix seconds>.<hostname>.<pid>.<n> (n counts the
  // writers of this process), and writes the file_version record to disk (or removes the file
  // again when that fails). A resumed run opens a new file beside the old ones (after
  // trim_tensorboard_logs); TensorBoard reads every event file of a directory.
  // Throws recur::Error naming the path when the directory or file cannot be made.
  explicit TensorBoardWriter(const std::filesystem::path& dir);
  // Flushes what is buffered; an error then is swallowed (a destructor must not throw): call
  // flush() first where a lost tail matters.
  ~TensorBoardWriter();
  TensorBoardWriter(TensorBoardWriter&&) noexcept;
  TensorBoardWriter& operator=(TensorBoardWriter&&) noexcept;

  // Appends one scalar (stored as float, as TensorBoard's simple_value is) to a memory buffer;
  // nothing reaches the file before flush(). After the first few calls (once the buffer and the
  // tag's string have their size) it allocates nothing.
  void scalar(std::string_view tag, double value, int64_t step);
  // Writes the buffer to the file and flushes the stream, so that TensorBoard sees every scalar
  // logged so far while the run goes on (call it once per update). Whole records only: a reader
  // never sees a record cut short by a flush. Throws recur::Error naming the file.
  void flush();

  const std::filesystem::path& path() const;  // the event file

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ScalarEvent {
  std::string tag;
  int64_t step = 0;
  double wall_time = 0;  // seconds since the Unix epoch
  float value = 0;
};

// Reads every scalar (simple_value) of one event file, or of every file in a directory whose name
// holds "tfevents" (in name order, which is creation order for one host); a directory without
// such files but with a tb/ subdirectory (a run directory) is read through that. Events in
// TensorBoard's tensor form and other kinds of events are skipped.
// Every record's two CRCs are checked, and a file must begin with a file_version record. Throws
// recur::Error naming the file and the byte offset of the record on a bad CRC, an unparseable
// Event, or a truncated record. A file whose writer is still running can end in a partial record
// only when it is read while a flush() is under way, and one whose writer was killed (or ran out
// of space) mid-flush; that is reported as truncated too (a reader that wants to follow a live
// file retries), unless `partial_tail_ok`: then every complete record is read and a partial last
// one is ignored, as TensorBoard does.
std::vector<ScalarEvent> read_tensorboard_scalars(const std::filesystem::path& file_or_dir,
                                                  bool partial_tail_ok = false);

// For a resume from the checkpoint at env step `last_step`: in every event file of `dir`, keeps
// the records up to that step and drops those after it (logged after the checkpoint, and logged
// again by the resumed run) and a partial last record, so that the directory read as a whole holds
// each step once, as the CSV logs do. Steps grow within a file, except that a background
// evaluation's eval/* record (run.eval_async) can follow train/* records of later steps; the trim
// stops at the first record past `last_step`, so it also drops such a result, and the resumed run
// evaluates that checkpoint again (its evaluation is pending in the resume state).
// Throws recur::Error naming a corrupt file.
void trim_tensorboard_logs(const std::filesystem::path& dir, int64_t last_step);

// The checksums of the record framing (exposed for tests): CRC-32C (Castagnoli polynomial
// 0x1EDC6F41, reflected, initial and final XOR 0xFFFFFFFF; crc32c("123456789") = 0xE3069283),
// and the masked form TFRecord stores.
uint32_t crc32c(std::string_view bytes);
uint32_t mask_crc32c(uint32_t crc);

}  // namespace recur::agent
