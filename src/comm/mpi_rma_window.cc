// The MPI implementation of RmaWindow: MPI_Win_allocate, one passive-target
// epoch (MPI_Win_lock_all) for the window's life, MPI_Win_flush for
// completion. Detects the Open MPI case in which MPI_Compare_and_swap
// crashes, so that callers choose another path instead (rma_window.h).
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "comm/mpi_error.h"
#include "comm/rma_window.h"

namespace cairn {
namespace {

MPI_Datatype MpiType(RmaElement type) {
  switch (type) {
    case RmaElement::kInt32: return MPI_INT32_T;
    case RmaElement::kInt64: return MPI_INT64_T;
    case RmaElement::kUint64: return MPI_UINT64_T;
    case RmaElement::kFloat: return MPI_FLOAT;
    case RmaElement::kDouble: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

// Open MPI 4.x: MPI_Compare_and_swap segfaults in btl/vader under the
// osc/rdma component that mpirun picks by default (Open MPI issue 11349;
// seen with 4.1.4), while osc/sm, chosen with `--mca osc sm`
// (OMPI_MCA_osc=sm), works. A crash cannot be probed for, so the library
// version and the selected component decide. "" when safe, else why not.
std::string CompareAndSwapHazard() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const std::string text(version, static_cast<size_t>(length));
  if (text.find("Open MPI v4.") == std::string::npos) return "";
  const char* osc = std::getenv("OMPI_MCA_osc");
  if (osc != nullptr && std::string(osc) == "sm") return "";
  return "MPI_Compare_and_swap crashes under Open MPI 4.x's default one-sided component "
         "(Open MPI issue 11349); run with `--mca osc sm` on one node to use it";
}

class MpiRmaWindow final : public RmaWindow {
 public:
  MpiRmaWindow(int rank, int size, bool cas_safe, std::string note, MPI_Win win, uint8_t* base,
               uint64_t bytes)
      : RmaWindow(rank, size, cas_safe, std::move(note)), win_(win), base_(base), bytes_(bytes) {}
  ~MpiRmaWindow() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }

  std::span<uint8_t> local() override { return {base_, bytes_}; }

  Status Put(int target, uint64_t offset, std::span<const uint8_t> bytes) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, bytes.size(), bytes_));
    return Pieces(bytes.size(), [&](uint64_t at, int n) {
      CAIRN_MPI(MPI_Put(bytes.data() + at, n, MPI_BYTE, target,
                        static_cast<MPI_Aint>(offset + at), n, MPI_BYTE, win_),
                "MPI_Put");
      return Status::Ok();
    });
  }
  Status Get(int target, uint64_t offset, std::span<uint8_t> into) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, into.size(), bytes_));
    return Pieces(into.size(), [&](uint64_t at, int n) {
      CAIRN_MPI(MPI_Get(into.data() + at, n, MPI_BYTE, target,
                        static_cast<MPI_Aint>(offset + at), n, MPI_BYTE, win_),
                "MPI_Get");
      return Status::Ok();
    });
  }
  Status Accumulate(int target, uint64_t offset, std::span<const uint8_t> values,
                    RmaElement type) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, values.size(), bytes_));
    const uint64_t element = RmaElementSize(type);
    const int count = static_cast<int>(values.size() / element);
    if (values.size() / element > uint64_t{1} << 30) {
      return Error(Code::kInvalidArgument, "MPI_Accumulate of {} bytes: at most 2^30 elements",
                   values.size());
    }
    CAIRN_MPI(MPI_Accumulate(values.data(), count, MpiType(type), target,
                             static_cast<MPI_Aint>(offset), count, MpiType(type), MPI_SUM, win_),
              "MPI_Accumulate");
    return Status::Ok();
  }
  Status Flush(int target) override {
    CAIRN_MPI(MPI_Win_flush(target, win_), "MPI_Win_flush");
    return Status::Ok();
  }
  Status FlushAll() override {
    CAIRN_MPI(MPI_Win_flush_all(win_), "MPI_Win_flush_all");
    return Status::Ok();
  }

  Result<uint64_t> FetchAdd(int target, uint64_t offset, uint64_t add) override {
    return WordOp(target, offset, add, MPI_SUM, "MPI_Fetch_and_op(sum)");
  }
  Result<uint64_t> AtomicLoad(int target, uint64_t offset) override {
    return WordOp(target, offset, 0, MPI_NO_OP, "MPI_Fetch_and_op(no-op)");
  }
  Status AtomicStore(int target, uint64_t offset, uint64_t value) override {
    return WordOp(target, offset, value, MPI_REPLACE, "MPI_Fetch_and_op(replace)").status();
  }
  Result<uint64_t> CompareAndSwap(int target, uint64_t offset, uint64_t expected,
                                  uint64_t desired) override {
    if (!compare_and_swap_safe()) return Error(Code::kUnsupported, "{}", compare_and_swap_note());
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, 8, bytes_));
    uint64_t found = 0;
    CAIRN_MPI(MPI_Compare_and_swap(&desired, &expected, &found, MPI_UINT64_T, target,
                                   static_cast<MPI_Aint>(offset), win_),
              "MPI_Compare_and_swap");
    CAIRN_MPI(MPI_Win_flush(target, win_), "MPI_Win_flush");
    return found;
  }
  Status StartFetchAdd(int target, uint64_t offset, const uint64_t* add,
                       uint64_t* before) override {
    return StartWordOp(target, offset, add, before, MPI_SUM, "MPI_Fetch_and_op(sum)");
  }
  Status StartCompareAndSwap(int target, uint64_t offset, const uint64_t* expected,
                             const uint64_t* desired, uint64_t* found) override {
    if (!compare_and_swap_safe()) return Error(Code::kUnsupported, "{}", compare_and_swap_note());
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, 8, bytes_));
    CAIRN_MPI(MPI_Compare_and_swap(desired, expected, found, MPI_UINT64_T, target,
                                   static_cast<MPI_Aint>(offset), win_),
              "MPI_Compare_and_swap");
    return Status::Ok();
  }
  Status StartSwap(int target, uint64_t offset, const uint64_t* value,
                   uint64_t* before) override {
    return StartWordOp(target, offset, value, before, MPI_REPLACE, "MPI_Fetch_and_op(replace)");
  }
  Status StartAtomicStore(int target, uint64_t offset, const uint64_t* value) override {
    // An accumulate with replace: atomic with the other atomics on the
    // word, with no result buffer.
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, 8, bytes_));
    CAIRN_MPI(MPI_Accumulate(value, 1, MPI_UINT64_T, target, static_cast<MPI_Aint>(offset), 1,
                             MPI_UINT64_T, MPI_REPLACE, win_),
              "MPI_Accumulate(replace)");
    return Status::Ok();
  }
  Status SyncLocal() override {
    CAIRN_MPI(MPI_Win_sync(win_), "MPI_Win_sync");
    return Status::Ok();
  }

 private:
  // MPI counts are int: long transfers go in pieces of at most 1 GiB.
  template <typename Fn>
  static Status Pieces(uint64_t length, Fn&& fn) {
    constexpr uint64_t kPiece = uint64_t{1} << 30;
    for (uint64_t at = 0; at < length; at += kPiece) {
      CAIRN_RETURN_IF_ERROR(fn(at, static_cast<int>(std::min(kPiece, length - at))));
    }
    return Status::Ok();
  }

  Result<uint64_t> WordOp(int target, uint64_t offset, uint64_t operand, MPI_Op op,
                          const char* what) {
    uint64_t found = 0;
    CAIRN_RETURN_IF_ERROR(StartWordOp(target, offset, &operand, &found, op, what));
    CAIRN_MPI(MPI_Win_flush(target, win_), "MPI_Win_flush");
    return found;
  }
  Status StartWordOp(int target, uint64_t offset, const uint64_t* operand, uint64_t* found,
                     MPI_Op op, const char* what) {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, 8, bytes_));
    CAIRN_MPI(MPI_Fetch_and_op(operand, found, MPI_UINT64_T, target,
                               static_cast<MPI_Aint>(offset), op, win_),
              what);
    return Status::Ok();
  }

  MPI_Win win_;
  uint8_t* base_;
  uint64_t bytes_;
};

}  // namespace

// Collective over comm (rma_window.h, NewRmaWindow).
Result<std::unique_ptr<RmaWindow>> NewMpiRmaWindow(MPI_Comm comm, uint64_t bytes) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  void* base = nullptr;
  MPI_Win win;
  CAIRN_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &base, &win),
            "MPI_Win_allocate");
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  // Every rank reads the same library and environment; the minimum makes
  // the answer one even if a rank's environment differs.
  const std::string hazard = CompareAndSwapHazard();
  int safe = hazard.empty() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &safe, 1, MPI_INT, MPI_MIN, comm);
  MPI_Barrier(comm);
  return std::unique_ptr<RmaWindow>(new MpiRmaWindow(
      rank, size, safe == 1, safe == 1 ? "" : (hazard.empty() ? "another rank cannot use "
                                                                "MPI_Compare_and_swap safely"
                                                              : hazard),
      win, static_cast<uint8_t*>(base), bytes));
}

}  // namespace cairn
