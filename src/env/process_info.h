// Facts about this process and its host that are not files: the host name
// and the CPU time the process has used. Kept in env/ with the other
// operating-system access.
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

}  // namespace cairn

#endif  // CAIRN_ENV_PROCESS_INFO_H_
