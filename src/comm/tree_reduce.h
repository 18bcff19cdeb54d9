// A reduction of byte strings with a merge function of the caller's, over a
// binomial tree: ceil(log2 P) rounds of point-to-point messages to rank 0,
// then a broadcast, so that every rank ends with the same result. It serves
// reductions MPI's predefined operations cannot express, such as the
// deduplication's top-K merge (dedup/top_k.h).
// Thread-safety: as Comm (the application's thread; collective).
#ifndef CAIRN_COMM_TREE_REDUCE_H_
#define CAIRN_COMM_TREE_REDUCE_H_

#include <functional>
#include <string>

#include "base/status.h"
#include "comm/comm.h"

namespace cairn {

// merge(left, right): right holds the contribution of higher ranks than
// left's, so a merge that prefers one side is deterministic.
using MergeBytes = std::function<Result<std::string>(const std::string& left, const std::string& right)>;

// Collective. Every rank passes its own bytes; every rank gets the merge
// of all of them, or, if a merge failed on some rank, that failure on
// every rank (Comm::Agree). In round k (k = 0, 1, ...) rank r with
// r mod 2^(k+1) == 2^k sends its partial result to r - 2^k and drops out.
// `finish`, if given, turns rank 0's full merge into what is broadcast
// (a reduction may need state in its merges that no rank needs at the end).
using FinishBytes = std::function<std::string(std::string merged)>;
Result<std::string> AllreduceTree(Comm& comm, std::string local, const MergeBytes& merge,
                                  const FinishBytes& finish = nullptr);

}  // namespace cairn

#endif  // CAIRN_COMM_TREE_REDUCE_H_
