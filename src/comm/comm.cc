#include "comm/comm.h"

#include <cstring>

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
  Status Broadcast(std::string*, int) override { return Status::Ok(); }
  // The only peer is this rank itself: a message to self is a copy.
  Status SendRecv(int dest, std::span<const uint8_t> send, int source,
                  std::span<uint8_t> recv) override {
    CAIRN_RETURN_IF_ERROR(CheckPeers(dest, source));
    if ((dest == kNoPeer) != (source == kNoPeer)) {
      return Error(Code::kInvalidArgument,
                   "a single-process comm sends to itself only within one SendRecv");
    }
    if (dest == kNoPeer) return Status::Ok();
    if (send.size() != recv.size()) return LengthMismatch(0, send.size(), recv.size());
    if (!send.empty()) std::memmove(recv.data(), send.data(), send.size());
    return Status::Ok();
  }
};

}  // namespace

Result<std::unique_ptr<Comm>> Comm::DupForThread() {
  return Error(Code::kUnsupported, "this communicator cannot be used from two threads at once");
}

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

Status Comm::Agree(const Status& local, AgreeDetail* detail) {
  // One allreduce in the common case: [0] lowest failing rank (size() if
  // none), [1] minus the number of ranks failing, [2] minus "out of space".
  std::vector<int64_t> words{local.ok() ? size() : rank(), local.ok() ? 0 : -1,
                             local.code() == Code::kNoSpace ? -1 : 0};
  CAIRN_RETURN_IF_ERROR(AllreduceMin(words));
  const int64_t first = words[0];
  if (first == size()) {
    if (detail != nullptr) *detail = AgreeDetail{};
    return Status::Ok();
  }
  // The count needs a sum; only paid when something failed.
  std::vector<double> failed{local.ok() ? 0.0 : 1.0};
  CAIRN_RETURN_IF_ERROR(AllreduceSum(failed));
  if (detail != nullptr) {
    detail->failed_ranks = static_cast<int>(failed[0]);
    detail->any_no_space = words[2] != 0;
  }
  // The failing rank's code travels as the first 4 bytes of its message.
  std::string wire;
  if (rank() == first) {
    const int32_t code = static_cast<int32_t>(local.code());
    wire.assign(reinterpret_cast<const char*>(&code), sizeof code);
    wire += local.message();
  }
  CAIRN_RETURN_IF_ERROR(Broadcast(&wire, static_cast<int>(first)));
  int32_t code = static_cast<int32_t>(Code::kInternal);
  if (wire.size() >= sizeof code) std::memcpy(&code, wire.data(), sizeof code);
  std::string message = wire.size() >= sizeof code ? wire.substr(sizeof code) : "";
  if (size() == 1) return Status(static_cast<Code>(code), message);
  const int others = static_cast<int>(failed[0]) - 1;
  if (others > 0) message += fmt::format(" (and {} more rank{})", others, others == 1 ? "" : "s");
  // A rank that failed otherwise than the lowest one keeps its own cause too.
  if (!local.ok() && rank() != first) message += fmt::format("; rank {}: {}", rank(), local.message());
  return Status(static_cast<Code>(code), fmt::format("rank {}: {}", first, message));
}

Status Comm::CheckPeers(int dest, int source) const {
  for (int peer : {dest, source}) {
    if (peer != kNoPeer && (peer < 0 || peer >= size())) {
      return Error(Code::kInvalidArgument, "rank {}: peer {} is not a rank of {}", rank(), peer,
                   size());
    }
  }
  return Status::Ok();
}

Status Comm::LengthMismatch(int source, uint64_t sent, uint64_t expected) const {
  return Error(Code::kComm, "rank {}: rank {} sent {} bytes where {} were expected", rank(),
               source, sent, expected);
}

std::unique_ptr<Comm> NewSingleComm() { return std::make_unique<SingleComm>(); }

}  // namespace cairn
