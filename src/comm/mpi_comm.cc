#include "comm/mpi_comm.h"

#include <algorithm>

namespace cairn {
namespace {

Status MpiError(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Error(Code::kComm, "{}: {}", what, std::string(text, static_cast<size_t>(len)));
}

#define CAIRN_MPI(call, what)                    \
  do {                                           \
    int rc_ = (call);                            \
    if (rc_ != MPI_SUCCESS) return MpiError(rc_, what); \
  } while (0)

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

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node() const override { return node_; }
  int nodes() const override { return nodes_; }
  int ranks_on_node() const override { return ranks_on_node_; }

  Status Barrier() override {
    CAIRN_MPI(MPI_Barrier(comm_), "MPI_Barrier");
    return Status::Ok();
  }
  Status AllreduceMin(std::vector<int64_t>& v) override {
    CAIRN_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T,
                            MPI_MIN, comm_),
              "MPI_Allreduce(min)");
    return Status::Ok();
  }
  Status AllreduceMax(std::vector<int64_t>& v) override {
    CAIRN_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T,
                            MPI_MAX, comm_),
              "MPI_Allreduce(max)");
    return Status::Ok();
  }
  Status AllreduceSum(std::vector<double>& v) override {
    CAIRN_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE,
                            MPI_SUM, comm_),
              "MPI_Allreduce(sum)");
    return Status::Ok();
  }
  Result<std::vector<int64_t>> Allgather(int64_t value) override {
    std::vector<int64_t> out(static_cast<size_t>(size_));
    CAIRN_MPI(MPI_Allgather(&value, 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, comm_),
              "MPI_Allgather");
    return out;
  }

  Status NodeBarrier() override {
    CAIRN_MPI(MPI_Barrier(node_comm_), "MPI_Barrier (node)");
    return Status::Ok();
  }

  Result<std::vector<int64_t>> AllgatherWords(const std::vector<int64_t>& values) override {
    std::vector<int64_t> out(values.size() * static_cast<size_t>(size_));
    int n = static_cast<int>(values.size());
    CAIRN_MPI(MPI_Allgather(values.data(), n, MPI_INT64_T, out.data(), n, MPI_INT64_T, comm_),
              "MPI_Allgather");
    return out;
  }

  Status Broadcast(std::string* bytes, int root) override {
    int64_t size = static_cast<int64_t>(bytes->size());
    CAIRN_MPI(MPI_Bcast(&size, 1, MPI_INT64_T, root, comm_), "MPI_Bcast (size)");
    bytes->resize(static_cast<size_t>(size));
    // MPI counts are int: send in pieces of at most 1 GiB.
    constexpr int64_t kPiece = int64_t{1} << 30;
    for (int64_t off = 0; off < size; off += kPiece) {
      const int n = static_cast<int>(std::min(kPiece, size - off));
      CAIRN_MPI(MPI_Bcast(bytes->data() + off, n, MPI_CHAR, root, comm_), "MPI_Bcast");
    }
    return Status::Ok();
  }

 private:
  MPI_Comm comm_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;  // this rank's (virtual) node
  int rank_ = 0, size_ = 1, node_ = 0, nodes_ = 1, ranks_on_node_ = 1;
};

}  // namespace

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
