// A versioned array survives a job restart as part of an ordinary
// checkpoint, through the public C++ API (cairn.hpp over cairn.h).
//   varray_restart_test save KIND    versions 0..4 written, checkpoint "va"
//                                    taken with version 5 open, then more
//                                    versions the restart must not see
//   varray_restart_test resume KIND  a new job: restart, reload, and every
//                                    kept version reads back as saved
// KIND is log-rma, log-msg or flat. run_restart.sh runs both as two jobs.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cairn/cairn.hpp"

namespace {

constexpr unsigned long long kPerRank = 5000;
constexpr int kKeep = 3;

double Value(long long version, unsigned long long i) { return version * 1e6 + static_cast<double>(i); }

int Fail(const char* what, const cairn::Status& s) {
  std::fprintf(stderr, "varray_restart_test: %s: %s\n", what, s.message().c_str());
  return 1;
}

int KindOf(const std::string& name) {
  if (name == "log-msg") return CAIRN_VARRAY_LOG_MSG;
  if (name == "flat") return CAIRN_VARRAY_FLAT;
  return CAIRN_VARRAY_LOG_RMA;
}

// Every rank writes the elements of the next rank's partition, so that the
// versions are made of remote puts.
cairn::Status WriteVersion(cairn::VersionedArray<double>& a, int rank, int size, long long v) {
  const unsigned long long first = ((rank + 1) % size) * kPerRank;
  std::vector<double> values(kPerRank);
  // Half the partition changes in odd versions: the log keeps the rest.
  const unsigned long long n = v % 2 == 1 ? kPerRank / 2 : kPerRank;
  for (unsigned long long i = 0; i < n; ++i) values[i] = Value(v, first + i);
  return a.Put(first, values.data(), n);
}

// What version v holds at element i after WriteVersion for 0..v.
double Expected(long long v, unsigned long long i) {
  const unsigned long long local = i % kPerRank;
  if (v % 2 == 1 && local >= kPerRank / 2) return Value(v - 1, i);
  return Value(v, i);
}

int Check(cairn::VersionedArray<double>& a, long long v, int size) {
  std::vector<double> all(kPerRank * size);
  cairn::Status s = a.GetVersion(v, 0, all.data(), all.size());
  if (!s.ok()) return Fail("get_version", s);
  for (unsigned long long i = 0; i < all.size(); ++i) {
    if (all[i] != Expected(v, i)) {
      std::fprintf(stderr, "varray_restart_test: version %lld element %llu is %g, %g expected\n",
                   v, i, all[i], Expected(v, i));
      return 1;
    }
  }
  return 0;
}

int Save(cairn::VersionedArray<double>& a, cairn::Session& session, int rank, int size) {
  for (long long v = 0; v < 5; ++v) {
    cairn::Status s = WriteVersion(a, rank, size, v);
    if (s.ok()) s = a.VersionInc();
    if (!s.ok()) return Fail("write", s);
  }
  cairn::Status s = session.Checkpoint("va", 5);
  if (!s.ok()) return Fail("checkpoint", s);
  for (long long v = 5; v < 7; ++v) {
    s = WriteVersion(a, rank, size, v + 100);
    if (s.ok()) s = a.VersionInc();
    if (!s.ok()) return Fail("write after the checkpoint", s);
  }
  return 0;
}

int Resume(cairn::VersionedArray<double>& a, cairn::Session& session, int size) {
  int restored = -1;
  cairn::Status s = session.Restart("va", 5, &restored);
  if (!s.ok()) return Fail("restart", s);
  s = a.Reload();
  if (!s.ok()) return Fail("reload", s);
  cairn_varray_info info;
  s = a.Info(&info);
  if (!s.ok()) return Fail("info", s);
  if (a.Version() != 5 || info.oldest_in_memory != 5 - kKeep) {
    std::fprintf(stderr, "varray_restart_test: reloaded versions %lld..%lld, 2..5 expected\n",
                 info.oldest_in_memory, a.Version());
    return 1;
  }
  for (long long v = 5 - kKeep; v < 5; ++v) {
    if (Check(a, v, size) != 0) return 1;
  }
  // The open version continues from version 4's contents.
  if (Check(a, 4, size) != 0) return 1;
  s = a.VersionInc();
  return s.ok() ? 0 : Fail("version_inc after reload", s);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string phase = argc > 1 ? argv[1] : "";
  const std::string kind = argc > 2 ? argv[2] : "log-rma";
  int rc = 1;
  {
    cairn::Status s;
    auto session = cairn::Session::Init(MPI_COMM_WORLD, "", &s);
    if (!session) return Fail("init", s);
    cairn_varray_options options = CAIRN_VARRAY_OPTIONS_INIT;
    options.kind = KindOf(kind);
    options.keep = kKeep;
    options.block_size = 1024;
    auto array =
        cairn::VersionedArray<double>::Create(MPI_COMM_WORLD, "va", kPerRank * size, options, &s);
    if (!array) return Fail("create", s);
    s = array->Protect(7);
    if (!s.ok()) return Fail("protect", s);
    if (phase == "save") rc = Save(*array, *session, rank, size);
    if (phase == "resume") rc = Resume(*array, *session, size);
  }
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("varray_restart_test %s %s: %s\n", phase.c_str(), kind.c_str(), rc == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return rc;
}
