#include "api/process_comm.h"

#include <charconv>
#include <optional>
#include <string>

#include <mpi.h>

#include "comm/mpi_comm.h"

namespace cairn {

namespace {

bool IsSet(const EnvLookup& lookup, const char* name) {
  std::optional<std::string> v = lookup(name);
  return v && !v->empty();
}

// A positive whole number, or 0.
int PositiveNumber(const std::optional<std::string>& text) {
  if (!text) return 0;
  int n = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  return ec == std::errc() && end == text->data() + text->size() && n > 0 ? n : 0;
}

}  // namespace

MpiLaunch DetectMpiLaunch(const EnvLookup& lookup) {
  MpiLaunch launch;
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"}) {
    launch.under_mpirun = launch.under_mpirun || IsSet(lookup, name);
  }
  if (!launch.under_mpirun) return launch;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    launch.size = PositiveNumber(lookup(name));
    if (launch.size > 0) break;
  }
  return launch;
}

Result<std::unique_ptr<ProcessComm>> ProcessComm::Open(const EnvLookup& lookup) {
  MpiLaunch launch = DetectMpiLaunch(lookup);
  if (!launch.under_mpirun || launch.size == 1) {
    return std::unique_ptr<ProcessComm>(new ProcessComm(NewSingleComm(), false));
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool finalize = false;
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return Error(Code::kComm, "MPI_Init_thread failed (MPI error {})", rc);
    finalize = true;
    // Callers may run threads that do I/O while the main thread alone calls
    // MPI; MPI_THREAD_SINGLE would not allow those threads to exist.
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      return Error(Code::kComm, "MPI does not support MPI_THREAD_FUNNELED");
    }
  }
  auto comm = NewMpiComm(MPI_COMM_WORLD, /*ranks_per_node=*/0);
  if (!comm.ok()) {
    if (finalize) MPI_Finalize();
    return comm.status();
  }
  return std::unique_ptr<ProcessComm>(new ProcessComm(std::move(comm).value(), finalize));
}

ProcessComm::~ProcessComm() {
  comm_.reset();  // MPI_Comm_free must come before MPI_Finalize
  if (finalize_) MPI_Finalize();
}

}  // namespace cairn
