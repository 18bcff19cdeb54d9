// cairn._core — the C API of Cairn (include/cairn/cairn.h) for Python. The
// pure-Python package around it (src/cairn/__init__.py) keeps the numpy
// arrays alive while they are protected, builds the dataclasses and the
// session; this file does the checks that need the buffer protocol, releases
// the GIL around every call that may block or communicate, and turns a
// negative status into the cairn.Error subclass of src/cairn/_errors.py.
#include <mpi.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "cairn/cairn.h"

namespace py = pybind11;

namespace {

// A failed Cairn call, carried to the exception translator below. Thrown
// only inside this module: pybind11 turns it into a Python exception.
struct CairnFailure {
  int code;
  std::string message;
};

// Checks a status returned by the C API; the message is read right away, on
// the calling thread, because the next Cairn call replaces it (cairn.h).
int Check(int rc) {
  if (rc < 0) throw CairnFailure{rc, cairn_error_message(CAIRN_LAST_ERROR)};
  return rc;
}

// Runs a C call with the GIL released: checkpoint, restart and the other
// collectives may wait for every rank, and other Python threads should run
// meanwhile.
template <typename Call>
int CheckReleased(Call call) {
  int rc;
  {
    py::gil_scoped_release release;
    rc = call();
  }
  return Check(rc);
}

const char* CString(const std::optional<std::string>& text) {
  return text ? text->c_str() : nullptr;
}

void InitMpi(long long fortran_comm, const std::optional<std::string>& config) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    throw CairnFailure{CAIRN_E_INVALID_ARGUMENT,
                       "cairn.init: MPI is not initialized (import mpi4py.MPI first, or pass "
                       "comm=None for a single process)"};
  }
  MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_comm));
  CheckReleased([&] { return cairn_init(comm, CString(config)); });
}

void InitSingle(const std::optional<std::string>& config) {
  CheckReleased([&] { return cairn_init_single(CString(config)); });
}

[[noreturn]] void RejectArray(const std::string& why) {
  throw CairnFailure{CAIRN_E_INVALID_ARGUMENT, why};
}

// Registers the array's own buffer (zero copy). The caller (cairn.protect)
// keeps a reference to the array for as long as it stays registered.
void Protect(int region_id, py::array array) {
  const std::string what = "cairn.protect(" + std::to_string(region_id) + "): ";
  if (!(array.flags() & py::array::c_style)) {
    RejectArray(what + "the array is not C-contiguous; pass numpy.ascontiguousarray(a) "
                       "and keep that copy as the state");
  }
  if (!array.writeable()) {
    RejectArray(what + "the array is read-only; restart could not fill it in");
  }
  if (array.dtype().kind() == 'O') {
    RejectArray(what + "an array of Python objects holds pointers, not data");
  }
  Check(cairn_protect(region_id, array.mutable_data(), static_cast<size_t>(array.size()),
                      static_cast<size_t>(array.itemsize())));
}

std::optional<int> RestartTest(const std::string& name, int max_version) {
  int version;
  int error;
  {
    py::gil_scoped_release release;
    version = cairn_restart_test(name.c_str(), max_version);
    error = cairn_last_error();  // -1 means "none" or an error: ask which
  }
  if (version >= 0) return version;
  Check(error);
  return std::nullopt;
}

py::dict LastCheckpoint() {
  cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
  Check(cairn_last_checkpoint(&info));
  py::dict out;
  out["version"] = info.version;
  out["number"] = info.number;
  out["skipped"] = info.skipped != 0;
  out["forced"] = info.forced != 0;
  out["tier"] = std::string(info.tier);
  out["rule"] = std::string(info.rule);
  out["seconds"] = info.seconds;
  out["bytes"] = info.bytes;
  out["reason"] = std::string(info.reason);
  out["ecc_protected_after"] = info.ecc_protected_after;
  out["pages_unique"] = info.pages_unique;
  out["pages_local_dup"] = info.pages_local_dup;
  out["pages_remote_ref"] = info.pages_remote_ref;
  out["pages_unchanged"] = info.pages_unchanged;
  out["pages_hashed"] = info.pages_hashed;
  out["pages_hashed_in_copy"] = info.pages_hashed_in_copy;
  out["dedup_whole"] = info.dedup_whole != 0;
  out["dedup_hash_seconds"] = info.dedup_hash_seconds;
  out["dedup_reduce_seconds"] = info.dedup_reduce_seconds;
  return out;
}

py::dict LastRestart() {
  cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
  Check(cairn_last_restart(&info));
  py::dict out;
  out["requested"] = info.requested;
  out["version"] = info.version;
  out["newest"] = info.newest;
  out["rollback_versions"] = info.rollback_versions;
  out["rollback_seconds"] = info.rollback_seconds;
  out["versions_failed"] = info.versions_failed;
  out["tier"] = std::string(info.tier);
  out["bytes"] = info.bytes;
  out["seconds"] = info.seconds;
  out["ecc_shards_corrected"] = info.ecc_shards_corrected;
  return out;
}

std::string RouteFile(const std::string& logical) {
  char path[4096];
  Check(cairn_route_file(logical.c_str(), path, sizeof path));
  return path;
}

std::string VersionString() {
  int v = cairn_version();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

// Raises the cairn.Error subclass for failure.code (cairn._errors.from_code).
void TranslateFailure(std::exception_ptr failure) {
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const CairnFailure& f) {
    py::object error = py::module_::import("cairn._errors").attr("from_code")(f.code, f.message);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Cairn's C API; use the package `cairn`, not this module.";
  py::register_exception_translator(&TranslateFailure);

  m.def("init_mpi", &InitMpi, py::arg("fortran_comm"), py::arg("config"));
  m.def("init_single", &InitSingle, py::arg("config"));
  m.def("protect", &Protect, py::arg("region_id"), py::arg("array").noconvert());
  m.def("unprotect", [](int region_id) { Check(cairn_unprotect(region_id)); });
  m.def("checkpoint", [](const std::string& name, int version, bool durable) {
    CheckReleased([&] {
      return cairn_checkpoint_flags(name.c_str(), version, durable ? CAIRN_CHECKPOINT_DURABLE : 0u);
    });
  });
  m.def("checkpoint_wait", [] { CheckReleased([] { return cairn_checkpoint_wait(); }); });
  m.def("should_checkpoint", [] { return CheckReleased([] { return cairn_should_checkpoint(); }) == 1; });
  m.def("restart_test", &RestartTest, py::arg("name"), py::arg("max_version"));
  m.def("restart", [](const std::string& name, int version) {
    return CheckReleased([&] { return cairn_restart(name.c_str(), version); });
  });
  m.def("delete", [](const std::string& name) {
    CheckReleased([&] { return cairn_delete(name.c_str()); });
  });
  m.def("delete_version", [](const std::string& name, int version) {
    CheckReleased([&] { return cairn_delete_version(name.c_str(), version); });
  }, py::arg("name"), py::arg("version"));
  m.def("last_checkpoint", &LastCheckpoint);
  m.def("last_restart", &LastRestart);
  m.def("route_file", &RouteFile, py::arg("logical"));
  m.def("finalize", [] { CheckReleased([] { return cairn_finalize(); }); });
  m.def("version", &VersionString);
}
