// A reduction with a merge of the caller's, over a binomial tree:
// ceil(log2 P) rounds of point-to-point messages to rank 0, then a
// broadcast, so that every rank ends with the same result. It serves
// reductions MPI's predefined operations cannot express, such as the
// deduplication's top-K merge (dedup/top_k.h).
// Thread-safety: as Comm (the application's thread; collective).
#ifndef CAIRN_COMM_TREE_REDUCE_H_
#define CAIRN_COMM_TREE_REDUCE_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "comm/comm.h"

namespace cairn {

// One rank's side of the reduction: its partial result, held in whatever
// form merging is cheapest; only Encode()'s bytes travel between ranks.
class TreeReduction {
 public:
  virtual ~TreeReduction() = default;
  // Folds in `right`, the Encode() of the subtree of the next higher ranks
  // (so a merge that prefers one side is deterministic). An error fails
  // the reduction on every rank.
  virtual Status Merge(std::string_view right) = 0;
  // This rank's partial result, for its parent.
  virtual std::string Encode() const = 0;
  // Rank 0, once everything is merged: what is broadcast. A reduction may
  // need state in its merges that no rank needs at the end.
  virtual std::string Finish() const { return Encode(); }
};

// Collective. Every rank passes its own contribution; every rank gets
// rank 0's Finish() of the merge of all of them or, if a merge failed on
// some rank, that failure on every rank (Comm::Agree). In round k
// (k = 0, 1, ...) rank r with r mod 2^(k+1) == 2^k sends its partial result
// to r - 2^k and drops out.
Result<std::string> AllreduceTree(Comm& comm, TreeReduction& reduction);

}  // namespace cairn

#endif  // CAIRN_COMM_TREE_REDUCE_H_
