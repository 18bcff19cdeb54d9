#include "dedup/top_k.h"

#include "comm/tree_reduce.h"

namespace cairn {
namespace {

// This rank's merged set, kept decoded between rounds: each message is
// decoded once, and only what goes to the parent is encoded.
class TopKReduction final : public TreeReduction {
 public:
  TopKReduction(TopKBuffers* buffers, size_t digest_bytes, int nranks, size_t threshold)
      : b_(*buffers), digest_bytes_(digest_bytes), nranks_(nranks), threshold_(threshold) {}

  Status Merge(std::string_view right) override {
    CAIRN_RETURN_IF_ERROR(
        DecodeHashFreqSet(right, digest_bytes_, nranks_, "a child rank", &b_.received));
    HashMerger(b_.set, b_.received, nranks_, threshold_, &b_.merged);
    b_.set.swap(b_.merged);
    return Status::Ok();
  }
  std::string Encode() const override { return EncodeHashFreqSet(b_.set, digest_bytes_); }
  // Only the pages two or more ranks hold (top_k.h).
  std::string Finish() const override {
    HashFreqSet shared;
    for (const HashFreq& t : b_.set) {
      if (t.count >= 2) shared.push_back(t);
    }
    return EncodeHashFreqSet(shared, digest_bytes_);
  }

 private:
  TopKBuffers& b_;
  size_t digest_bytes_;
  int nranks_;
  size_t threshold_;
};

}  // namespace

Status AllReduceTopK(Comm& comm, size_t digest_bytes, size_t threshold, TopKBuffers* buffers) {
  TopKReduction reduction(buffers, digest_bytes, comm.size(), threshold);
  CAIRN_ASSIGN_OR_RETURN(std::string top, AllreduceTree(comm, reduction));
  return DecodeHashFreqSet(top, digest_bytes, comm.size(), "rank 0's broadcast", &buffers->set);
}

}  // namespace cairn
