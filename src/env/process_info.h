// Facts about this process and its host that are not files: the host name,
// the CPU time the process has used and the CPUs it may run on. Kept in
// env/ with the other operating-system access.
// Thread-safety: reentrant functions.
#ifndef CAIRN_ENV_PROCESS_INFO_H_
#define CAIRN_ENV_PROCESS_INFO_H_

#include <string>

namespace cairn {

// gethostname(2), or "unknown".
std::string HostName();

// CPU seconds used by every thread of this process so far
// (CLOCK_PROCESS_CPUTIME_ID); 0 where the clock is unavailable.
double ProcessCpuSeconds();

// CPUs in this process's affinity mask (sched_getaffinity: what mpirun's
// binding or a cgroup leaves it), at least 1.
int UsableCpus();

}  // namespace cairn

#endif  // CAIRN_ENV_PROCESS_INFO_H_
