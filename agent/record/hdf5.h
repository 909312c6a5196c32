// A small RAII layer over the HDF5 C API: what Minari and D4RL files need, and what their tests
// read back.
//
//   auto file = H5File::create("main_data.hdf5", /*track_order=*/true);
//   auto ep = file.create_group("episode_0");
//   ep.set_attr_int("total_steps", 3);
//   auto obs = ep.create_dataset("observations", H5Type::kFloat32, {4, 2});   // (N+1, obs_dim)
//   obs.write<float>(values);
//   file.close();                                  // flushes; throws on failure
//
// Every handle closes itself (H5Fclose, H5Gclose, ...) in its destructor. HDF5's own printing of
// error stacks is switched off (H5Eset_auto2) when a file is created or opened; a failing call
// throws recur::Error naming the file, the object and HDF5's innermost reasons instead.
//
// Element types are those recur writes; kBool is h5py's bool (an HDF5 enum over int8 with members
// FALSE=0 and TRUE=1), which h5py and numpy read back as np.bool_. Datasets are chunked, with an
// unlimited first dimension, as Minari writes them (h5py chunks=True, maxshape=(None, ...)).
//
// This header does not include <hdf5.h>: Hid is HDF5's hid_t (int64_t since 1.10; hdf5.cc checks).
// Debian's HDF5 is the serial, not thread-safe build: use HDF5 from one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace recur::agent::record {

using Hid = int64_t;

enum class H5Type { kFloat32, kFloat64, kInt64, kUint8, kBool };

// What a stored dataset or attribute holds, as read back.
struct H5TypeInfo {
  enum class Class { kInteger, kFloat, kString, kEnum, kOther };
  Class cls = Class::kOther;
  size_t size = 0;         // bytes per element (of the base type, for enums)
  bool is_signed = false;  // integers and enum bases
  std::vector<std::pair<std::string, int64_t>> enum_members;  // enums only, in stored order

  // "float32", "float64", "int64", "uint8", "string", "enum(int8){FALSE=0, TRUE=1}", ...
  std::string describe() const;
  // h5py's bool: enum over int8 with exactly FALSE=0, TRUE=1.
  bool is_h5py_bool() const;
};

// Owns one HDF5 identifier and closes it with the matching H5*close. Move-only.
class H5Handle {
 public:
  using Closer = int (*)(Hid);
  H5Handle() = default;
  H5Handle(Hid id, Closer closer) : id_(id), closer_(closer) {}
  ~H5Handle() { reset(); }
  H5Handle(H5Handle&& other) noexcept { *this = std::move(other); }
  H5Handle& operator=(H5Handle&& other) noexcept;
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;

  Hid id() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; returns HDF5's status (negative on failure).
  int reset() noexcept;

 private:
  Hid id_ = -1;
  Closer closer_ = nullptr;
};

// Where an object lives, for error messages: the file's path and the object's path inside it.
struct H5Where {
  std::shared_ptr<const std::string> file;
  std::string path;  // "/episode_0/observations"
};

// A group, dataset or file: something that holds attributes.
class H5Object {
 public:
  Hid id() const { return handle_.id(); }
  const std::string& file_path() const { return *where_.file; }
  const std::string& path() const { return where_.path; }

  // Scalar attributes, as h5py writes Python ints, floats and strs (variable-length UTF-8).
  // An existing attribute of the same name is replaced.
  void set_attr_int(const std::string& name, int64_t value);
  void set_attr_uint(const std::string& name, uint64_t value);
  void set_attr_double(const std::string& name, double value);
  void set_attr_string(const std::string& name, const std::string& value);

  bool has_attr(const std::string& name) const;
  std::vector<std::string> attr_names() const;  // creation order where tracked, else by name
  H5TypeInfo attr_type(const std::string& name) const;
  int64_t attr_int(const std::string& name) const;
  uint64_t attr_uint(const std::string& name) const;
  double attr_double(const std::string& name) const;
  std::string attr_string(const std::string& name) const;

 protected:
  H5Object() = default;
  H5Object(H5Handle handle, H5Where where) : handle_(std::move(handle)), where_(std::move(where)) {}
  std::string child_path(const std::string& name) const;
  [[noreturn]] void fail(const std::string& action, const std::string& object) const;

  H5Handle handle_;
  H5Where where_;
};

struct H5DatasetOptions {
  int64_t chunk_rows = 0;  // rows (first dimension) per chunk; 0 = about 64 KiB per chunk
  int gzip = 0;            // deflate level 1..9; 0 = uncompressed (Minari's default)
};

class H5Dataset : public H5Object {
 public:
  std::vector<int64_t> shape() const;
  int64_t rows() const;  // first dimension
  H5TypeInfo type() const;

  // Writes the whole dataset (values.size() == product of shape). T is float, double, int64_t or
  // uint8_t; HDF5 converts to the stored type (uint8_t 0/1 values for kBool datasets).
  template <typename T>
  void write(std::span<const T> values);
  // Extends the first dimension and writes the new rows (values.size() a multiple of the row).
  template <typename T>
  void append(std::span<const T> values);
  // Reads the whole dataset, converted to T (uint8_t for bool enums).
  template <typename T>
  std::vector<T> read() const;

 private:
  friend class H5Group;
  using H5Object::H5Object;
};

class H5Group : public H5Object {
 public:
  // track_order: keep links and attributes in creation order (h5py's track_order=True).
  H5Group create_group(const std::string& name, bool track_order = false);
  H5Group group(const std::string& name) const;
  // shape: at least one dimension; the first is extendable.
  H5Dataset create_dataset(const std::string& name, H5Type type, const std::vector<int64_t>& shape,
                           const H5DatasetOptions& options = {});
  H5Dataset dataset(const std::string& name) const;
  bool contains(const std::string& name) const;
  // Link names: in creation order where the group tracks it, else by name.
  std::vector<std::string> children() const;

 protected:
  friend class H5File;
  using H5Object::H5Object;
};

class H5File : public H5Group {
 public:
  // Creates (truncating an existing file) with HDF5's default, earliest-compatible format.
  static H5File create(const std::filesystem::path& path, bool track_order = false);
  static H5File open_read(const std::filesystem::path& path);
  // Flushes and closes; throws recur::Error when HDF5 cannot. Objects opened from this file must
  // be closed (destroyed) first, or HDF5 keeps the file open until they are. A file this process
  // created is then fsynced (H5Fflush only hands the bytes to the kernel), so that a writer that
  // renames it into place afterwards never publishes a file a crash could leave incomplete.
  void close();

 private:
  using H5Group::H5Group;
  bool created_ = false;  // by create(): close() fsyncs it
};

}  // namespace recur::agent::record
