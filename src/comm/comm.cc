#include "comm/comm.h"

namespace cairn {
namespace {

class SingleComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int node() const override { return 0; }
  int nodes() const override { return 1; }
  int ranks_on_node() const override { return 1; }
  Status Barrier() override { return Status::Ok(); }
  Status AllreduceMin(std::vector<int64_t>&) override { return Status::Ok(); }
  Status AllreduceMax(std::vector<int64_t>&) override { return Status::Ok(); }
  Status AllreduceSum(std::vector<double>&) override { return Status::Ok(); }
  Result<std::vector<int64_t>> Allgather(int64_t value) override {
    return std::vector<int64_t>{value};
  }
  Status NodeBarrier() override { return Status::Ok(); }
  Result<std::vector<int64_t>> AllgatherWords(const std::vector<int64_t>& values) override {
    return values;
  }
};

}  // namespace

Result<int64_t> Comm::Min(int64_t value) {
  std::vector<int64_t> v{value};
  CAIRN_RETURN_IF_ERROR(AllreduceMin(v));
  return v[0];
}

Result<int64_t> Comm::Max(int64_t value) {
  std::vector<int64_t> v{value};
  CAIRN_RETURN_IF_ERROR(AllreduceMax(v));
  return v[0];
}

Result<bool> Comm::AllTrue(bool value) {
  CAIRN_ASSIGN_OR_RETURN(int64_t m, Min(value ? 1 : 0));
  return m == 1;
}

std::unique_ptr<Comm> NewSingleComm() { return std::make_unique<SingleComm>(); }

}  // namespace cairn
