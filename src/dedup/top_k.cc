#include "dedup/top_k.h"

#include "comm/tree_reduce.h"

namespace cairn {

Result<HashFreqSet> AllReduceTopK(Comm& comm, const HashFreqSet& local, size_t digest_bytes,
                                  size_t threshold) {
  const int nranks = comm.size();
  MergeBytes merge = [&](const std::string& left, const std::string& right) -> Result<std::string> {
    CAIRN_ASSIGN_OR_RETURN(HashFreqSet l, DecodeHashFreqSet(left, digest_bytes, nranks, "this rank"));
    CAIRN_ASSIGN_OR_RETURN(HashFreqSet r, DecodeHashFreqSet(right, digest_bytes, nranks, "a child rank"));
    return EncodeHashFreqSet(HashMerger(l, r, nranks, threshold), digest_bytes);
  };
  FinishBytes shared_only = [&](std::string merged) {
    Result<HashFreqSet> all = DecodeHashFreqSet(merged, digest_bytes, nranks, "rank 0's merge");
    if (!all.ok()) return merged;  // rank 0 made it: cannot fail to decode
    std::erase_if(*all, [](const HashFreq& t) { return t.count < 2; });
    return EncodeHashFreqSet(*all, digest_bytes);
  };
  CAIRN_ASSIGN_OR_RETURN(std::string top, AllreduceTree(comm, EncodeHashFreqSet(local, digest_bytes),
                                                        merge, shared_only));
  return DecodeHashFreqSet(top, digest_bytes, nranks, "rank 0's broadcast");
}

}  // namespace cairn
