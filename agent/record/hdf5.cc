#include "agent/record/hdf5.h"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.h"

namespace recur::agent::record {

static_assert(std::is_same_v<hid_t, Hid>, "recur expects HDF5 >= 1.10 (64-bit hid_t)");
static_assert(std::is_same_v<herr_t, int>, "H5Handle::Closer assumes herr_t is int");

namespace {

// HDF5 prints every failed call's error stack to stderr unless told not to; recur reports the
// failure itself (with the file and object) instead. HDF5's exit handler is not installed: after
// a write failed (a full disk), H5Fclose cannot flush and the file stays open, and HDF5 1.10's
// handler then crashes (SIGSEGV in H5F__close_cb) while closing it at exit, turning recur's exit
// status 2 into 139. Files are closed explicitly; one left open at exit is a failed one, whose
// temp directory is removed anyway.
void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5dont_atexit(); });  // before anything initializes the library
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

// The innermost description on HDF5's current error stack: the most specific one ("name already
// exists", "unable to open file: name = '...', errno = 2, error message = 'No such file or
// directory', ..."), on one line.
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc && *e->desc) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  if (reason.empty()) return "unknown HDF5 error";
  for (char& c : reason)
    if (c == '\n') c = ' ';
  return reason;
}

[[noreturn]] void fail_at(const std::string& file, const std::string& action,
                          const std::string& object) {
  throw Error(fmt::format("HDF5 file {}: cannot {} '{}': {}", file, action, object, hdf5_reason()));
}

H5Handle own(hid_t id, H5Handle::Closer closer) {
  return H5Handle(id, closer);
}

// h5py's bool: an enum over native int8 with FALSE=0, TRUE=1 (h5py/h5t.pyx, _c_bool).
H5Handle make_bool_type() {
  H5Handle t = own(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
  int8_t v = 0;
  H5Tenum_insert(t.id(), "FALSE", &v);
  v = 1;
  H5Tenum_insert(t.id(), "TRUE", &v);
  return t;
}

// The type stored in the file (little-endian, as numpy's '<f4', '<i8', ... write it).
H5Handle file_type(H5Type type) {
  switch (type) {
    case H5Type::kFloat32:
      return own(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
    case H5Type::kFloat64:
      return own(H5Tcopy(H5T_IEEE_F64LE), H5Tclose);
    case H5Type::kInt64:
      return own(H5Tcopy(H5T_STD_I64LE), H5Tclose);
    case H5Type::kUint8:
      return own(H5Tcopy(H5T_STD_U8LE), H5Tclose);
    case H5Type::kBool:
      return make_bool_type();
  }
  RECUR_ASSERT(false);
}

size_t type_size(H5Type type) {
  switch (type) {
    case H5Type::kFloat32:
      return 4;
    case H5Type::kFloat64:
    case H5Type::kInt64:
      return 8;
    case H5Type::kUint8:
    case H5Type::kBool:
      return 1;
  }
  RECUR_ASSERT(false);
}

template <typename T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, uint64_t>) return H5T_NATIVE_UINT64;
  if constexpr (std::is_same_v<T, uint8_t>) return H5T_NATIVE_UINT8;
}

H5TypeInfo describe_type(hid_t t) {
  H5TypeInfo info;
  switch (H5Tget_class(t)) {
    case H5T_INTEGER:
      info.cls = H5TypeInfo::Class::kInteger;
      break;
    case H5T_FLOAT:
      info.cls = H5TypeInfo::Class::kFloat;
      break;
    case H5T_STRING:
      info.cls = H5TypeInfo::Class::kString;
      break;
    case H5T_ENUM:
      info.cls = H5TypeInfo::Class::kEnum;
      break;
    default:
      info.cls = H5TypeInfo::Class::kOther;
  }
  info.size = H5Tget_size(t);
  if (info.cls == H5TypeInfo::Class::kInteger) info.is_signed = H5Tget_sign(t) == H5T_SGN_2;
  if (info.cls == H5TypeInfo::Class::kEnum) {
    H5Handle base = own(H5Tget_super(t), H5Tclose);
    info.is_signed = H5Tget_sign(base.id()) == H5T_SGN_2;
    const int n = H5Tget_nmembers(t);
    for (int i = 0; i < n; ++i) {
      char* name = H5Tget_member_name(t, static_cast<unsigned>(i));
      unsigned char raw[8] = {};
      H5Tget_member_value(t, static_cast<unsigned>(i), raw);
      int64_t value = 0;
      if (info.size == 1)
        value = info.is_signed ? static_cast<int8_t>(raw[0]) : raw[0];
      else if (info.size <= 8)
        std::memcpy(&value, raw, info.size);  // little-endian hosts only (x86, arm64)
      info.enum_members.emplace_back(name ? name : "", value);
      H5free_memory(name);
    }
  }
  return info;
}

}  // namespace

// ---- H5TypeInfo --------------------------------------------------------------------------------

std::string H5TypeInfo::describe() const {
  const std::string bits = std::to_string(size * 8);
  switch (cls) {
    case Class::kInteger:
      return (is_signed ? "int" : "uint") + bits;
    case Class::kFloat:
      return "float" + bits;
    case Class::kString:
      return "string";
    case Class::kEnum: {
      std::string s = "enum(" + std::string(is_signed ? "int" : "uint") + bits + "){";
      for (size_t i = 0; i < enum_members.size(); ++i)
        s += fmt::format("{}{}={}", i ? ", " : "", enum_members[i].first, enum_members[i].second);
      return s + "}";
    }
    case Class::kOther:
      break;
  }
  return "other";
}

bool H5TypeInfo::is_h5py_bool() const {
  return cls == Class::kEnum && size == 1 && is_signed && enum_members.size() == 2 &&
         enum_members[0] == std::pair<std::string, int64_t>("FALSE", 0) &&
         enum_members[1] == std::pair<std::string, int64_t>("TRUE", 1);
}

// ---- H5Handle ----------------------------------------------------------------------------------

H5Handle& H5Handle::operator=(H5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, -1);
    closer_ = std::exchange(other.closer_, nullptr);
  }
  return *this;
}

int H5Handle::reset() noexcept {
  int status = 0;
  if (id_ >= 0 && closer_) status = closer_(id_);
  id_ = -1;
  return status;
}

// ---- H5Object: attributes ----------------------------------------------------------------------

std::string H5Object::child_path(const std::string& name) const {
  return where_.path == "/" ? "/" + name : where_.path + "/" + name;
}

void H5Object::fail(const std::string& action, const std::string& object) const {
  fail_at(*where_.file, action, object);
}

namespace {
// Writes one scalar attribute, replacing an existing one (h5py's attrs[name] = value).
void write_scalar_attr(const H5Object& obj, const std::string& name, hid_t file_type,
                       hid_t mem_type, const void* value, const std::string& where) {
  const htri_t exists = H5Aexists(obj.id(), name.c_str());
  if (exists < 0 || (exists > 0 && H5Adelete(obj.id(), name.c_str()) < 0))
    fail_at(obj.file_path(), "replace attribute", where);
  H5Handle space = own(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr =
      own(H5Acreate2(obj.id(), name.c_str(), file_type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
          H5Aclose);
  if (!attr.valid() || H5Awrite(attr.id(), mem_type, value) < 0)
    fail_at(obj.file_path(), "write attribute", where);
}
}  // namespace

void H5Object::set_attr_int(const std::string& name, int64_t value) {
  write_scalar_attr(*this, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, path() + "@" + name);
}

void H5Object::set_attr_uint(const std::string& name, uint64_t value) {
  write_scalar_attr(*this, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value, path() + "@" + name);
}

void H5Object::set_attr_double(const std::string& name, double value) {
  write_scalar_attr(*this, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, path() + "@" + name);
}

void H5Object::set_attr_string(const std::string& name, const std::string& value) {
  H5Handle t = own(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.id(), H5T_VARIABLE);
  H5Tset_cset(t.id(), H5T_CSET_UTF8);
  const char* p = value.c_str();
  write_scalar_attr(*this, name, t.id(), t.id(), &p, path() + "@" + name);
}

bool H5Object::has_attr(const std::string& name) const {
  const htri_t exists = H5Aexists(id(), name.c_str());
  if (exists < 0) fail("look up attribute", path() + "@" + name);
  return exists > 0;
}

std::vector<std::string> H5Object::attr_names() const {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  hsize_t idx = 0;
  if (H5Aiterate2(id(), H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, collect, &names) < 0) {
    H5Eclear2(H5E_DEFAULT);  // creation order not tracked: fall back to names
    names.clear();
    idx = 0;
    if (H5Aiterate2(id(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &names) < 0)
      fail("list attributes of", path());
  }
  return names;
}

namespace {
H5Handle open_attr(const H5Object& obj, const std::string& name) {
  H5Handle attr = own(H5Aopen(obj.id(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) fail_at(obj.file_path(), "open attribute", obj.path() + "@" + name);
  return attr;
}

void read_scalar_attr(const H5Object& obj, const std::string& name, hid_t mem_type, void* out) {
  H5Handle attr = open_attr(obj, name);
  if (H5Aread(attr.id(), mem_type, out) < 0)
    fail_at(obj.file_path(), "read attribute", obj.path() + "@" + name);
}
}  // namespace

H5TypeInfo H5Object::attr_type(const std::string& name) const {
  H5Handle attr = open_attr(*this, name);
  H5Handle t = own(H5Aget_type(attr.id()), H5Tclose);
  if (!t.valid()) fail("read the type of attribute", path() + "@" + name);
  return describe_type(t.id());
}

int64_t H5Object::attr_int(const std::string& name) const {
  int64_t v = 0;
  read_scalar_attr(*this, name, H5T_NATIVE_INT64, &v);
  return v;
}

uint64_t H5Object::attr_uint(const std::string& name) const {
  uint64_t v = 0;
  read_scalar_attr(*this, name, H5T_NATIVE_UINT64, &v);
  return v;
}

double H5Object::attr_double(const std::string& name) const {
  double v = 0;
  read_scalar_attr(*this, name, H5T_NATIVE_DOUBLE, &v);
  return v;
}

std::string H5Object::attr_string(const std::string& name) const {
  H5Handle attr = open_attr(*this, name);
  H5Handle t = own(H5Aget_type(attr.id()), H5Tclose);
  const std::string where = path() + "@" + name;
  if (!t.valid() || H5Tget_class(t.id()) != H5T_STRING) fail("read as a string attribute", where);
  H5Handle mem = own(H5Tget_native_type(t.id(), H5T_DIR_DEFAULT), H5Tclose);
  if (H5Tis_variable_str(t.id()) > 0) {
    char* p = nullptr;
    if (H5Aread(attr.id(), mem.id(), &p) < 0) fail("read attribute", where);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  std::string s(H5Tget_size(t.id()), '\0');
  if (H5Aread(attr.id(), mem.id(), s.data()) < 0) fail("read attribute", where);
  s.resize(std::strlen(s.c_str()));  // fixed-size strings are NUL-padded
  return s;
}

// ---- H5Dataset ---------------------------------------------------------------------------------

std::vector<int64_t> H5Dataset::shape() const {
  H5Handle space = own(H5Dget_space(id()), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.id()) : -1;
  if (rank < 0) fail("read the shape of dataset", path());
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

int64_t H5Dataset::rows() const {
  const auto s = shape();
  return s.empty() ? 1 : s[0];
}

H5TypeInfo H5Dataset::type() const {
  H5Handle t = own(H5Dget_type(id()), H5Tclose);
  if (!t.valid()) fail("read the type of dataset", path());
  return describe_type(t.id());
}

namespace {
int64_t product(const std::vector<int64_t>& dims, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < dims.size(); ++i) n *= dims[i];
  return n;
}

// The memory type for T: T's native type, except that one-byte values go to and from an enum
// dataset (h5py's bool) through the enum itself, since HDF5 does not convert integers to enums.
template <typename T>
H5Handle memory_type_for(hid_t dataset) {
  H5Handle ft = own(H5Dget_type(dataset), H5Tclose);
  if (sizeof(T) == 1 && ft.valid() && H5Tget_class(ft.id()) == H5T_ENUM &&
      H5Tget_size(ft.id()) == 1)
    return own(H5Tget_native_type(ft.id(), H5T_DIR_DEFAULT), H5Tclose);
  return own(H5Tcopy(native_type<T>()), H5Tclose);
}
}  // namespace

template <typename T>
void H5Dataset::write(std::span<const T> values) {
  const auto dims = shape();
  RECUR_CHECK_ARG(static_cast<int64_t>(values.size()) == product(dims),
                  "{}: dataset '{}' holds {} values, {} given", file_path(), path(), product(dims),
                  values.size());
  if (values.empty()) return;
  H5Handle mem = memory_type_for<T>(id());
  if (H5Dwrite(id(), mem.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    fail("write dataset", path());
}

template <typename T>
void H5Dataset::append(std::span<const T> values) {
  auto dims = shape();
  RECUR_ASSERT(!dims.empty());
  const int64_t row = product(dims, 1);
  RECUR_CHECK_ARG(row > 0 && static_cast<int64_t>(values.size()) % row == 0,
                  "{}: dataset '{}' rows hold {} values; {} given", file_path(), path(), row,
                  values.size());
  if (values.empty()) return;
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  start[0] = static_cast<hsize_t>(dims[0]);
  count[0] = values.size() / static_cast<size_t>(row);
  std::vector<hsize_t> extent(count);
  extent[0] = start[0] + count[0];
  if (H5Dset_extent(id(), extent.data()) < 0) fail("extend dataset", path());
  H5Handle fspace = own(H5Dget_space(id()), H5Sclose);
  H5Handle mspace =
      own(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
  H5Handle mem = memory_type_for<T>(id());
  if (!fspace.valid() || !mspace.valid() ||
      H5Sselect_hyperslab(fspace.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0 ||
      H5Dwrite(id(), mem.id(), mspace.id(), fspace.id(), H5P_DEFAULT, values.data()) < 0)
    fail("append to dataset", path());
}

template <typename T>
std::vector<T> H5Dataset::read() const {
  std::vector<T> out(static_cast<size_t>(product(shape())));
  if (out.empty()) return out;
  H5Handle mem = memory_type_for<T>(id());
  if (H5Dread(id(), mem.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail("read dataset", path());
  return out;
}

template void H5Dataset::write<float>(std::span<const float>);
template void H5Dataset::write<double>(std::span<const double>);
template void H5Dataset::write<int64_t>(std::span<const int64_t>);
template void H5Dataset::write<uint8_t>(std::span<const uint8_t>);
template void H5Dataset::append<float>(std::span<const float>);
template void H5Dataset::append<double>(std::span<const double>);
template void H5Dataset::append<int64_t>(std::span<const int64_t>);
template void H5Dataset::append<uint8_t>(std::span<const uint8_t>);
template std::vector<float> H5Dataset::read<float>() const;
template std::vector<double> H5Dataset::read<double>() const;
template std::vector<int64_t> H5Dataset::read<int64_t>() const;
template std::vector<uint8_t> H5Dataset::read<uint8_t>() const;

// ---- H5Group -----------------------------------------------------------------------------------

namespace {
// h5py's track_order=True: links and attributes remembered (and indexed) in creation order.
void set_track_order(hid_t group_create_plist) {
  H5Pset_link_creation_order(group_create_plist, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  H5Pset_attr_creation_order(group_create_plist, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
}
}  // namespace

H5Group H5Group::create_group(const std::string& name, bool track_order) {
  H5Handle gcpl = own(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  if (track_order) set_track_order(gcpl.id());
  H5Handle g = own(H5Gcreate2(id(), name.c_str(), H5P_DEFAULT, gcpl.id(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail("create group", child_path(name));
  return H5Group(std::move(g), {where_.file, child_path(name)});
}

H5Group H5Group::group(const std::string& name) const {
  H5Handle g = own(H5Gopen2(id(), name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail("open group", child_path(name));
  return H5Group(std::move(g), {where_.file, child_path(name)});
}

H5Dataset H5Group::create_dataset(const std::string& name, H5Type type,
                                  const std::vector<int64_t>& shape,
                                  const H5DatasetOptions& options) {
  RECUR_CHECK_ARG(!shape.empty(), "dataset '{}': recur writes datasets of rank >= 1",
                  child_path(name));
  RECUR_CHECK_ARG(options.gzip >= 0 && options.gzip <= 9, "gzip level {} is not in 0..9",
                  options.gzip);
  const int rank = static_cast<int>(shape.size());
  std::vector<hsize_t> dims(shape.begin(), shape.end()), maxdims(dims), chunk(dims);
  maxdims[0] = H5S_UNLIMITED;
  for (size_t i = 1; i < chunk.size(); ++i) chunk[i] = std::max<hsize_t>(chunk[i], 1);
  const int64_t row_bytes =
      std::max<int64_t>(1, product(shape, 1) * static_cast<int64_t>(type_size(type)));
  int64_t rows = options.chunk_rows;
  if (rows <= 0) {
    rows = std::max<int64_t>(1, (int64_t{64} << 10) / row_bytes);
    if (shape[0] > 0) rows = std::min(rows, shape[0]);
  }
  chunk[0] = static_cast<hsize_t>(rows);

  H5Handle space = own(H5Screate_simple(rank, dims.data(), maxdims.data()), H5Sclose);
  H5Handle dcpl = own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Handle ftype = file_type(type);
  if (!space.valid() || !dcpl.valid() || !ftype.valid() ||
      H5Pset_chunk(dcpl.id(), rank, chunk.data()) < 0 ||
      (options.gzip > 0 && H5Pset_deflate(dcpl.id(), static_cast<unsigned>(options.gzip)) < 0))
    fail("set up dataset", child_path(name));
  H5Handle d = own(
      H5Dcreate2(id(), name.c_str(), ftype.id(), space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT),
      H5Dclose);
  if (!d.valid()) fail("create dataset", child_path(name));
  return H5Dataset(std::move(d), {where_.file, child_path(name)});
}

H5Dataset H5Group::dataset(const std::string& name) const {
  H5Handle d = own(H5Dopen2(id(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) fail("open dataset", child_path(name));
  return H5Dataset(std::move(d), {where_.file, child_path(name)});
}

bool H5Group::contains(const std::string& name) const {
  const htri_t exists = H5Lexists(id(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail("look up", child_path(name));
  return exists > 0;
}

std::vector<std::string> H5Group::children() const {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  hsize_t idx = 0;
  if (H5Literate(id(), H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, collect, &names) < 0) {
    H5Eclear2(H5E_DEFAULT);  // creation order not tracked: fall back to names
    names.clear();
    idx = 0;
    if (H5Literate(id(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &names) < 0)
      fail("list the members of group", path());
  }
  return names;
}

// ---- H5File ------------------------------------------------------------------------------------

H5File H5File::create(const std::filesystem::path& path, bool track_order) {
  silence_hdf5_errors();
  H5Handle fcpl = own(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  if (track_order) set_track_order(fcpl.id());
  H5Handle f = own(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.id(), H5P_DEFAULT), H5Fclose);
  if (!f.valid()) fail_at(path.string(), "create", "/");
  H5File file(std::move(f), {std::make_shared<const std::string>(path.string()), "/"});
  file.created_ = true;
  return file;
}

H5File H5File::open_read(const std::filesystem::path& path) {
  silence_hdf5_errors();
  H5Handle f = own(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) fail_at(path.string(), "open", "/");
  return H5File(std::move(f), {std::make_shared<const std::string>(path.string()), "/"});
}

void H5File::close() {
  if (!handle_.valid()) return;
  const bool flushed = H5Fflush(id(), H5F_SCOPE_LOCAL) >= 0;
  if (!flushed) {
    const std::string reason = hdf5_reason();
    handle_.reset();
    throw Error(fmt::format("HDF5 file {}: cannot flush: {}", file_path(), reason));
  }
  if (handle_.reset() < 0) fail("close", "/");
  if (!created_) return;
  // The bytes on disk, not only in the page cache: open the closed file again and fsync it.
  const std::string path = file_path();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!synced)
    throw Error(fmt::format("HDF5 file {}: cannot sync it to disk: {}", path, std::strerror(err)));
}

}  // namespace recur::agent::record
