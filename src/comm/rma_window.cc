#include "comm/rma_window.h"

#include <atomic>
#include <cstring>
#include <vector>

#include "comm/mpi_comm.h"

namespace cairn {

uint64_t RmaElementSize(RmaElement type) {
  switch (type) {
    case RmaElement::kInt32:
    case RmaElement::kFloat:
      return 4;
    case RmaElement::kInt64:
    case RmaElement::kUint64:
    case RmaElement::kDouble:
      return 8;
  }
  return 8;
}

Status RmaWindow::CheckRange(int target, uint64_t offset, uint64_t length,
                             uint64_t window_bytes) const {
  if (target < 0 || target >= size_) {
    return Error(Code::kInvalidArgument, "RMA target rank {} out of range (window of {} ranks)",
                 target, size_);
  }
  if (offset > window_bytes || length > window_bytes - offset) {
    return Error(Code::kInvalidArgument,
                 "RMA access [{}, {}) on rank {} lies beyond the window's {} bytes", offset,
                 offset + length, target, window_bytes);
  }
  return Status::Ok();
}

Result<std::unique_ptr<RmaWindow>> NewMpiRmaWindow(MPI_Comm comm, uint64_t bytes);

namespace {

// Sums count elements of T from src into dst.
template <typename T>
void SumInto(uint8_t* dst, const uint8_t* src, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    a += b;
    std::memcpy(dst + i * sizeof(T), &a, sizeof(T));
  }
}

// One rank, plain memory: every access completes at once. The atomics use
// std::atomic_ref, because varray's message server and the application
// thread of the same rank may both hold such a window over one buffer.
class LocalRmaWindow final : public RmaWindow {
 public:
  explicit LocalRmaWindow(uint64_t bytes) : RmaWindow(0, 1, true, ""), memory_(bytes, 0) {}

  std::span<uint8_t> local() override { return memory_; }

  Status Put(int target, uint64_t offset, std::span<const uint8_t> bytes) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, bytes.size(), memory_.size()));
    if (!bytes.empty()) std::memcpy(memory_.data() + offset, bytes.data(), bytes.size());
    return Status::Ok();
  }
  Status Get(int target, uint64_t offset, std::span<uint8_t> into) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, into.size(), memory_.size()));
    if (!into.empty()) std::memcpy(into.data(), memory_.data() + offset, into.size());
    return Status::Ok();
  }
  Status Accumulate(int target, uint64_t offset, std::span<const uint8_t> values,
                    RmaElement type) override {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, values.size(), memory_.size()));
    const uint64_t n = values.size() / RmaElementSize(type);
    uint8_t* dst = memory_.data() + offset;
    switch (type) {
      case RmaElement::kInt32: SumInto<int32_t>(dst, values.data(), n); break;
      case RmaElement::kInt64: SumInto<int64_t>(dst, values.data(), n); break;
      case RmaElement::kUint64: SumInto<uint64_t>(dst, values.data(), n); break;
      case RmaElement::kFloat: SumInto<float>(dst, values.data(), n); break;
      case RmaElement::kDouble: SumInto<double>(dst, values.data(), n); break;
    }
    return Status::Ok();
  }
  Status Flush(int) override { return Status::Ok(); }
  Status FlushAll() override { return Status::Ok(); }

  Result<uint64_t> FetchAdd(int target, uint64_t offset, uint64_t add) override {
    CAIRN_ASSIGN_OR_RETURN(uint64_t* word, Word(target, offset));
    return std::atomic_ref<uint64_t>(*word).fetch_add(add);
  }
  Result<uint64_t> AtomicLoad(int target, uint64_t offset) override {
    CAIRN_ASSIGN_OR_RETURN(uint64_t* word, Word(target, offset));
    return std::atomic_ref<uint64_t>(*word).load();
  }
  Status AtomicStore(int target, uint64_t offset, uint64_t value) override {
    CAIRN_ASSIGN_OR_RETURN(uint64_t* word, Word(target, offset));
    std::atomic_ref<uint64_t>(*word).store(value);
    return Status::Ok();
  }
  Result<uint64_t> CompareAndSwap(int target, uint64_t offset, uint64_t expected,
                                  uint64_t desired) override {
    CAIRN_ASSIGN_OR_RETURN(uint64_t* word, Word(target, offset));
    std::atomic_ref<uint64_t>(*word).compare_exchange_strong(expected, desired);
    return expected;  // the word found
  }
  Status StartFetchAdd(int target, uint64_t offset, const uint64_t* add,
                       uint64_t* before) override {
    CAIRN_ASSIGN_OR_RETURN(*before, FetchAdd(target, offset, *add));
    return Status::Ok();
  }
  Status StartCompareAndSwap(int target, uint64_t offset, const uint64_t* expected,
                             const uint64_t* desired, uint64_t* found) override {
    CAIRN_ASSIGN_OR_RETURN(*found, CompareAndSwap(target, offset, *expected, *desired));
    return Status::Ok();
  }
  Status StartAtomicStore(int target, uint64_t offset, const uint64_t* value) override {
    return AtomicStore(target, offset, *value);
  }
  Status StartSwap(int target, uint64_t offset, const uint64_t* value,
                   uint64_t* before) override {
    CAIRN_ASSIGN_OR_RETURN(uint64_t* word, Word(target, offset));
    *before = std::atomic_ref<uint64_t>(*word).exchange(*value);
    return Status::Ok();
  }
  Status SyncLocal() override {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return Status::Ok();
  }

 private:
  Result<uint64_t*> Word(int target, uint64_t offset) {
    CAIRN_RETURN_IF_ERROR(CheckRange(target, offset, 8, memory_.size()));
    if (offset % 8 != 0) {
      return Error(Code::kInvalidArgument, "RMA atomic at offset {} is not 8-aligned", offset);
    }
    return reinterpret_cast<uint64_t*>(memory_.data() + offset);
  }

  // operator new aligns it to 16 bytes, enough for the 64-bit atomics.
  std::vector<uint8_t> memory_;
};

}  // namespace

std::unique_ptr<RmaWindow> NewLocalRmaWindow(uint64_t bytes) {
  return std::make_unique<LocalRmaWindow>(bytes);
}

Result<std::unique_ptr<RmaWindow>> NewRmaWindow(Comm& comm, uint64_t bytes) {
  MPI_Comm mpi = MpiHandle(comm);
  if (mpi != MPI_COMM_NULL) return NewMpiRmaWindow(mpi, bytes);
  if (comm.size() == 1) return NewLocalRmaWindow(bytes);
  return Error(Code::kUnsupported,
               "one-sided windows need an MPI communicator (this one has {} ranks without MPI)",
               comm.size());
}

}  // namespace cairn
