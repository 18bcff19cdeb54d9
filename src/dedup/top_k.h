// The collective step of Algorithm 1 (line 16): ALL_REDUCE of every rank's
// HashFreq with HASH_MERGER, in ceil(log2 P) rounds (comm/tree_reduce.h).
// Every rank gets the same TopK: at most `threshold` of the pages held by
// the most ranks, each with the rank designated to store it. Of those, only
// the pages that two or more ranks hold are broadcast: a page one rank
// holds is that rank's own (HASH_MERGER never moves it), so no rank's plan
// needs it, and leaving it out spares the broadcast of every unique page
// of the job (all of them, for data without duplicates).
// Thread-safety: as Comm (collective, the application's thread).
#ifndef CAIRN_DEDUP_TOP_K_H_
#define CAIRN_DEDUP_TOP_K_H_

#include <cstddef>

#include "base/status.h"
#include "comm/comm.h"
#include "dedup/hash_merger.h"

namespace cairn {

// The memory the step works in, which a caller that takes it in every
// checkpoint keeps from one to the next (hash_merger.h).
struct TopKBuffers {
  // This rank's partial result: its own set (LocalHashFreq) before the
  // step, the job's top-K after it.
  HashFreqSet set;
  HashFreqSet received;  // a child's, decoded
  HashFreqSet merged;    // set merged with received, then swapped with set
};

// Collective: buffers->set goes in as this rank's own set and comes out as
// the job's top-K. kCorrupt (on every rank) if a rank received a malformed
// set.
Status AllReduceTopK(Comm& comm, size_t digest_bytes, size_t threshold, TopKBuffers* buffers);

}  // namespace cairn

#endif  // CAIRN_DEDUP_TOP_K_H_
