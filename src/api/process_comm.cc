#include "api/process_comm.h"

#include <charconv>
#include <optional>
#include <string>

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
    return std::unique_ptr<ProcessComm>(new ProcessComm(NewSingleComm()));
  }
  CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<MpiProcess> mpi, MpiProcess::Start());
  return std::unique_ptr<ProcessComm>(new ProcessComm(std::move(mpi)));
}

}  // namespace cairn
