#include "dedup/top_k.h"

#include "comm/tree_reduce.h"

namespace cairn {
namespace {

// This rank's merged set, kept decoded between rounds: each message is
// decoded once, and only what goes to the parent is encoded.
class TopKReduction final : public TreeReduction {
 public:
  TopKReduction(HashFreqSet local, size_t digest_bytes, int nranks, size_t threshold)
      : set_(std::move(local)), digest_bytes_(digest_bytes), nranks_(nranks), threshold_(threshold) {}

  Status Merge(std::string_view right) override {
    CAIRN_ASSIGN_OR_RETURN(HashFreqSet r, DecodeHashFreqSet(right, digest_bytes_, nranks_, "a child rank"));
    set_ = HashMerger(set_, r, nranks_, threshold_);
    return Status::Ok();
  }
  std::string Encode() const override { return EncodeHashFreqSet(set_, digest_bytes_); }
  // Only the pages two or more ranks hold (top_k.h).
  std::string Finish() const override {
    HashFreqSet shared;
    for (const HashFreq& t : set_) {
      if (t.count >= 2) shared.push_back(t);
    }
    return EncodeHashFreqSet(shared, digest_bytes_);
  }

 private:
  HashFreqSet set_;
  size_t digest_bytes_;
  int nranks_;
  size_t threshold_;
};

}  // namespace

Result<HashFreqSet> AllReduceTopK(Comm& comm, HashFreqSet local, size_t digest_bytes,
                                  size_t threshold) {
  TopKReduction reduction(std::move(local), digest_bytes, comm.size(), threshold);
  CAIRN_ASSIGN_OR_RETURN(std::string top, AllreduceTree(comm, reduction));
  return DecodeHashFreqSet(top, digest_bytes, comm.size(), "rank 0's broadcast");
}

}  // namespace cairn
