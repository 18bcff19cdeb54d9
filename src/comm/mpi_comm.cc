#include "comm/mpi_comm.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "comm/mpi_error.h"

namespace cairn {
namespace {

// Completes a nonblocking MPI call started with result `started`, polling
// MPI and giving the core away between polls. A rank that reaches a
// collective first would otherwise spin in MPI on a core that a rank still
// working, or Cairn's own background threads (drains, ECC encodes, the
// slot reservation), may share: with ranks oversubscribed on a node, or
// more threads than cores. On a core of its own, yield returns at once and
// the wait polls as MPI's blocking call would.
Status Complete(int started, MPI_Request* requests, int count, const char* what) {
  if (started != MPI_SUCCESS) return MpiError(started, what);
  int done = 0;
  while (true) {
    const int rc = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return MpiError(rc, what);
    if (done) return Status::Ok();
    std::this_thread::yield();
  }
}
Status Complete(int started, MPI_Request& request, const char* what) {
  return Complete(started, &request, 1, what);
}

class MpiComm final : public Comm {
 public:
  explicit MpiComm(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiComm() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
    MPI_Comm_free(&comm_);
  }

  Status InitTopology(int ranks_per_node) {
    // The shared-memory split runs on every rank whatever ranks_per_node
    // says, so that ranks configured differently still make the same calls.
    // Real nodes: ranks sharing memory form a node; node numbers follow the
    // order of each node's lowest rank.
    MPI_Comm local;
    CAIRN_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
              "MPI_Comm_split_type");
    int local_rank = 0;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &ranks_on_node_);
    int leader = rank_;
    MPI_Bcast(&leader, 1, MPI_INT, 0, local);
    MPI_Comm_free(&local);
    CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> leaders, Allgather(leader));
    node_ = 0;
    nodes_ = 0;
    for (int r = 0; r < size_; ++r) {
      if (leaders[r] == r) {
        if (r == leader) node_ = nodes_;
        ++nodes_;
      }
    }
    if (ranks_per_node > 0) {
      node_ = rank_ / ranks_per_node;
      nodes_ = (size_ + ranks_per_node - 1) / ranks_per_node;
      ranks_on_node_ = std::min(ranks_per_node, size_ - node_ * ranks_per_node);
    }
    CAIRN_MPI(MPI_Comm_split(comm_, node_, rank_, &node_comm_), "MPI_Comm_split (node)");
    MPI_Comm_set_errhandler(node_comm_, MPI_ERRORS_RETURN);
    return Status::Ok();
  }

  Result<std::unique_ptr<Comm>> DupForThread() override {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      return Error(Code::kUnsupported,
                   "MPI was initialised with thread level {} (MPI_THREAD_MULTIPLE is {}): only "
                   "one thread may communicate",
                   provided, static_cast<int>(MPI_THREAD_MULTIPLE));
    }
    MPI_Comm dup;
    CAIRN_MPI(MPI_Comm_dup(comm_, &dup), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    auto copy = std::make_unique<MpiComm>(dup);
    CAIRN_MPI(MPI_Comm_dup(node_comm_, &copy->node_comm_), "MPI_Comm_dup (node)");
    MPI_Comm_set_errhandler(copy->node_comm_, MPI_ERRORS_RETURN);
    copy->node_ = node_;
    copy->nodes_ = nodes_;
    copy->ranks_on_node_ = ranks_on_node_;
    return std::unique_ptr<Comm>(std::move(copy));
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node() const override { return node_; }
  int nodes() const override { return nodes_; }
  int ranks_on_node() const override { return ranks_on_node_; }
  MPI_Comm handle() const { return comm_; }

  Status Barrier() override {
    MPI_Request r;
    return Complete(MPI_Ibarrier(comm_, &r), r, "MPI_Barrier");
  }
  Status AllreduceMin(std::vector<int64_t>& v) override {
    return AllreduceInPlace(v.data(), v.size(), MPI_INT64_T, MPI_MIN, "MPI_Allreduce(min)");
  }
  Status AllreduceMax(std::vector<int64_t>& v) override {
    return AllreduceInPlace(v.data(), v.size(), MPI_INT64_T, MPI_MAX, "MPI_Allreduce(max)");
  }
  Status AllreduceSum(std::vector<double>& v) override {
    return AllreduceInPlace(v.data(), v.size(), MPI_DOUBLE, MPI_SUM, "MPI_Allreduce(sum)");
  }
  Result<std::vector<int64_t>> Allgather(int64_t value) override {
    return AllgatherWords({value});
  }

  Status NodeBarrier() override {
    MPI_Request r;
    return Complete(MPI_Ibarrier(node_comm_, &r), r, "MPI_Barrier (node)");
  }

  Result<std::vector<int64_t>> AllgatherWords(const std::vector<int64_t>& values) override {
    std::vector<int64_t> out(values.size() * static_cast<size_t>(size_));
    int n = static_cast<int>(values.size());
    MPI_Request r;
    CAIRN_RETURN_IF_ERROR(Complete(MPI_Iallgather(values.data(), n, MPI_INT64_T, out.data(), n,
                                                  MPI_INT64_T, comm_, &r),
                                   r, "MPI_Allgather"));
    return out;
  }

  Status Broadcast(std::string* bytes, int root) override {
    int64_t size = static_cast<int64_t>(bytes->size());
    MPI_Request r;
    CAIRN_RETURN_IF_ERROR(
        Complete(MPI_Ibcast(&size, 1, MPI_INT64_T, root, comm_, &r), r, "MPI_Bcast (size)"));
    bytes->resize(static_cast<size_t>(size));
    for (uint64_t off = 0; off < static_cast<uint64_t>(size); off += kPiece) {
      const int n = PieceLength(static_cast<uint64_t>(size), off);
      CAIRN_RETURN_IF_ERROR(
          Complete(MPI_Ibcast(bytes->data() + off, n, MPI_CHAR, root, comm_, &r), r, "MPI_Bcast"));
    }
    return Status::Ok();
  }

  Status SendRecv(int dest, std::span<const uint8_t> send, int source,
                  std::span<uint8_t> recv) override {
    CAIRN_RETURN_IF_ERROR(CheckPeers(dest, source));
    const int to = dest == kNoPeer ? MPI_PROC_NULL : dest;
    const int from = source == kNoPeer ? MPI_PROC_NULL : source;
    // The length goes first, so that a receiver expecting another length
    // can still consume the message piece by piece and report it.
    uint64_t send_length = send.size();
    uint64_t announced = recv.size();
    CAIRN_RETURN_IF_ERROR(Exchange(&send_length, 1, MPI_UINT64_T, to, &announced, 1,
                                   MPI_UINT64_T, from, "MPI_Sendrecv (length)"));
    const bool fits = announced == recv.size();
    std::vector<uint8_t> drain(fits ? 0 : static_cast<size_t>(std::min<uint64_t>(announced, kPiece)));
    const uint64_t pieces = std::max(PieceCount(send.size()), PieceCount(announced));
    for (uint64_t i = 0; i < pieces; ++i) {
      const uint64_t off = i * kPiece;
      const int send_count = PieceLength(send.size(), off);
      const int recv_count = PieceLength(announced, off);
      uint8_t* into = fits ? recv.data() + off : drain.data();
      CAIRN_RETURN_IF_ERROR(Exchange(send_count > 0 ? send.data() + off : nullptr, send_count,
                                     MPI_BYTE, send_count > 0 ? to : MPI_PROC_NULL,
                                     recv_count > 0 ? into : nullptr, recv_count, MPI_BYTE,
                                     recv_count > 0 ? from : MPI_PROC_NULL, "MPI_Sendrecv"));
    }
    if (!fits && from != MPI_PROC_NULL) return LengthMismatch(source, announced, recv.size());
    return Status::Ok();
  }

 private:
  // MPI_Allreduce of `count` elements in place, completed as every call
  // here is (Complete).
  Status AllreduceInPlace(void* data, size_t count, MPI_Datatype type, MPI_Op op,
                          const char* what) {
    MPI_Request r;
    return Complete(
        MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), type, op, comm_, &r), r, what);
  }
  // MPI_Sendrecv, completed as every call here is (Complete).
  Status Exchange(const void* send, int send_count, MPI_Datatype send_type, int to, void* recv,
                  int recv_count, MPI_Datatype recv_type, int from, const char* what) {
    MPI_Request r[2];
    CAIRN_MPI(MPI_Irecv(recv, recv_count, recv_type, from, kPointToPointTag, comm_, &r[0]), what);
    const int started = MPI_Isend(send, send_count, send_type, to, kPointToPointTag, comm_, &r[1]);
    if (started != MPI_SUCCESS) {
      MPI_Cancel(&r[0]);
      MPI_Request_free(&r[0]);
    }
    return Complete(started, r, 2, what);
  }

  // MPI counts are int: large buffers move in pieces of at most 1 GiB.
  static constexpr uint64_t kPiece = uint64_t{1} << 30;
  // One tag is enough: MPI's non-overtaking rule keeps the order of the
  // messages between two ranks, and collectives never match point to point.
  static constexpr int kPointToPointTag = 7001;
  static uint64_t PieceCount(uint64_t length) { return (length + kPiece - 1) / kPiece; }
  static int PieceLength(uint64_t length, uint64_t offset) {
    return offset >= length ? 0 : static_cast<int>(std::min(kPiece, length - offset));
  }

  MPI_Comm comm_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;  // this rank's (virtual) node
  int rank_ = 0, size_ = 1, node_ = 0, nodes_ = 1, ranks_on_node_ = 1;
};

}  // namespace

MPI_Comm MpiHandle(const Comm& comm) {
  const auto* mpi = dynamic_cast<const MpiComm*>(&comm);
  return mpi == nullptr ? MPI_COMM_NULL : mpi->handle();
}

Result<std::unique_ptr<Comm>> NewMpiComm(MPI_Comm comm, int ranks_per_node) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return Error(Code::kComm, "MPI is not initialized (call MPI_Init first)");
  if (comm == MPI_COMM_NULL) return Error(Code::kInvalidArgument, "communicator is MPI_COMM_NULL");
  MPI_Comm dup;
  CAIRN_MPI(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  auto mpi = std::make_unique<MpiComm>(dup);
  CAIRN_RETURN_IF_ERROR(mpi->InitTopology(ranks_per_node));
  return std::unique_ptr<Comm>(std::move(mpi));
}

}  // namespace cairn
