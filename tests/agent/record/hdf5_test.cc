// The HDF5 wrapper: what it writes reads back through the plain C API with h5py's types, and its
// errors name the file and the object.
#include "agent/record/hdf5.h"

#include <doctest/doctest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace recur::agent::record;

using recur::test::error_of;
using recur::test::TempDir;

namespace {}  // namespace

TEST_CASE("hdf5: datasets and attributes round trip with h5py's types") {
  TempDir tmp("hdf5_test");
  const fs::path path = tmp.path / "t.hdf5";
  {
    H5File f = H5File::create(path, /*track_order=*/true);
    H5Group g = f.create_group("episode_0");
    g.set_attr_int("id", 7);
    g.set_attr_uint("seed", 18446744073709551615ull);
    g.set_attr_double("mean", 0.25);
    g.set_attr_string("name", "CartPole \xc3\xa9");
    g.set_attr_int("id", 8);  // replaces
    const std::vector<float> obs = {1, 2, 3, 4, 5, 6};
    g.create_dataset("obs", H5Type::kFloat32, {3, 2}).write<float>(obs);
    const std::vector<double> rewards = {0.5, -1.5};
    g.create_dataset("rewards", H5Type::kFloat64, {2}).write<double>(rewards);
    const std::vector<int64_t> actions = {0, 1};
    g.create_dataset("actions", H5Type::kInt64, {2}).write<int64_t>(actions);
    const std::vector<uint8_t> flags = {0, 1};
    g.create_dataset("done", H5Type::kBool, {2}).write<uint8_t>(flags);
    g.create_dataset("bytes", H5Type::kUint8, {2}).write<uint8_t>(flags);
    // Extendable, compressed, appended twice.
    H5Dataset a =
        f.create_dataset("appended", H5Type::kFloat32, {0, 2}, {.chunk_rows = 4, .gzip = 4});
    const std::vector<float> rows1 = {1, 2}, rows2 = {3, 4, 5, 6};
    a.append<float>(rows1);
    a.append<float>(rows2);
    CHECK_THROWS_AS(a.append<float>(std::vector<float>{1, 2, 3}), std::invalid_argument);
    CHECK_THROWS_AS(g.dataset("obs").write<float>(rows1), std::invalid_argument);
    f.create_group("b_second");
    f.create_group("a_third");
    f.close();
  }

  H5File f = H5File::open_read(path);
  // track_order: creation order, not name order.
  CHECK(f.children() == std::vector<std::string>{"episode_0", "appended", "b_second", "a_third"});
  H5Group g = f.group("episode_0");
  CHECK(g.attr_int("id") == 8);
  CHECK(g.attr_uint("seed") == 18446744073709551615ull);
  CHECK(g.attr_double("mean") == 0.25);
  CHECK(g.attr_string("name") == "CartPole \xc3\xa9");
  CHECK(g.attr_type("id").describe() == "int64");
  CHECK(g.attr_type("seed").describe() == "uint64");
  CHECK(g.attr_type("mean").describe() == "float64");
  CHECK(g.attr_type("name").cls == H5TypeInfo::Class::kString);
  CHECK(g.has_attr("id"));
  CHECK_FALSE(g.has_attr("nope"));

  H5Dataset obs = g.dataset("obs");
  CHECK(obs.shape() == std::vector<int64_t>{3, 2});
  CHECK(obs.type().describe() == "float32");
  CHECK(obs.read<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(g.dataset("rewards").type().describe() == "float64");
  CHECK(g.dataset("rewards").read<double>() == std::vector<double>{0.5, -1.5});
  CHECK(g.dataset("actions").type().describe() == "int64");
  CHECK(g.dataset("bytes").type().describe() == "uint8");
  const H5TypeInfo done = g.dataset("done").type();
  CHECK(done.describe() == "enum(int8){FALSE=0, TRUE=1}");
  CHECK(done.is_h5py_bool());
  CHECK(g.dataset("done").read<uint8_t>() == std::vector<uint8_t>{0, 1});
  H5Dataset a = f.dataset("appended");
  CHECK(a.shape() == std::vector<int64_t>{3, 2});
  CHECK(a.read<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});

  // The same enum seen through the C API directly, as h5py would build it.
  hid_t d = H5Dopen2(f.id(), "/episode_0/done", H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  REQUIRE(H5Tget_class(t) == H5T_ENUM);
  hid_t base = H5Tget_super(t);
  CHECK(H5Tequal(base, H5T_NATIVE_INT8) > 0);
  CHECK(H5Tget_nmembers(t) == 2);
  H5Tclose(base);
  H5Tclose(t);
  // Unlimited first dimension, chunked (h5py's maxshape=(None, ...), chunks=True).
  hid_t space = H5Dget_space(d);
  hsize_t dims[1], maxdims[1];
  H5Sget_simple_extent_dims(space, dims, maxdims);
  CHECK(maxdims[0] == H5S_UNLIMITED);
  H5Sclose(space);
  hid_t dcpl = H5Dget_create_plist(d);
  CHECK(H5Pget_layout(dcpl) == H5D_CHUNKED);
  H5Pclose(dcpl);
  H5Dclose(d);
}

TEST_CASE("hdf5: errors name the file and the object") {
  TempDir tmp("hdf5_test");
  const std::string missing = (tmp.path / "missing.hdf5").string();
  std::string e = error_of([&] { H5File::open_read(missing); });
  CHECK(e.find(missing) != std::string::npos);
  CHECK(e.find("cannot open") != std::string::npos);

  const fs::path path = tmp.path / "t.hdf5";
  H5File f = H5File::create(path);
  f.create_group("g");
  e = error_of([&] { f.group("g").dataset("nope"); });
  CHECK(e.find(path.string()) != std::string::npos);
  CHECK(e.find("/g/nope") != std::string::npos);
  e = error_of([&] { f.create_group("g"); });  // exists
  CHECK(e.find("cannot create group '/g'") != std::string::npos);
  e = error_of([&] { f.group("g").attr_int("nope"); });
  CHECK(e.find("/g@nope") != std::string::npos);

  // A directory that cannot exist (its parent is a file; root could write anywhere else).
  const std::string bad = (path / "sub.hdf5").string();
  e = error_of([&] { H5File::create(bad); });
  CHECK(e.find(bad) != std::string::npos);
  MESSAGE(e);
}

TEST_CASE("hdf5: close() fsyncs a created file by its path, and says when it cannot") {
  TempDir dir("hdf5_sync");
  {
    // The normal case: flushed, closed, synced, readable.
    H5File f = H5File::create(dir.path / "ok.hdf5");
    f.close();
    H5File r = H5File::open_read(dir.path / "ok.hdf5");
    r.close();  // opened for reading: nothing to sync
  }
  // The sync reopens the file by name: a file unlinked while open cannot be synced, and close()
  // reports it instead of letting a writer rename an unsynced file into place.
  H5File f = H5File::create(dir.path / "gone.hdf5");
  std::filesystem::remove(dir.path / "gone.hdf5");
  const std::string e = error_of([&] { f.close(); });
  CHECK(e.find("gone.hdf5: cannot sync it to disk") != std::string::npos);
}
