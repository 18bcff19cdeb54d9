// The log-structured array over MPI-3 RMA (paper §III-D1): the owner's log
// is its window; clients run the whole protocol (log_client.h); owners act
// on their own log only inside the collective calls (log_owner.h).
#include "varray/log_owner.h"
#include "varray/varray.h"

namespace cairn {
namespace {

class LogRmaArray final : public VersionedArray {
 public:
  LogRmaArray(std::unique_ptr<Comm> comm, Env* env, const VarrayOptions& options,
              const Geometry& geometry, std::unique_ptr<RmaWindow> window, bool use_cas,
              const LogLayout& layout)
      : VersionedArray(std::move(comm), env, options, geometry),
        window_(std::move(window)),
        owner_(window_->local(), layout, local_bytes()),
        client_(window_.get(), layout, use_cas),
        use_cas_(use_cas) {}
  ~LogRmaArray() override { (void)Close(); }

  // Formats this rank's log and tells every client where each log stands.
  Status Init() {
    CAIRN_ASSIGN_OR_RETURN(uint64_t lineage, NewLineage(comm()));
    owner_.Format(lineage);
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    CAIRN_RETURN_IF_ERROR(comm().Barrier());
    client_.SetVersion(owner_.version());
    return Start();
  }

  std::span<uint8_t> state() override { return window_->local(); }

 protected:
  Status WritePiece(int rank, uint64_t offset, std::span<const uint8_t> data,
                    std::optional<RmaElement> acc) override {
    return client_.Write(rank, offset, data, acc);
  }
  Status StartReadPiece(int rank, uint64_t offset, std::span<uint8_t> into) override {
    return client_.StartRead(rank, offset, into);
  }
  Status FinishReads() override { return client_.FinishReads(); }
  bool reads_pending() const override { return client_.reads_pending(); }
  Status ReadFrozenPiece(int rank, int64_t version, uint64_t offset,
                         std::span<uint8_t> into) override {
    return client_.ReadFrozen(rank, version, offset, into);
  }
  bool VersionIncNeedsExclusive() const override {
    // The tail as clients' fetch-and-adds left it (MPI_Win_sync); puts
    // still landing are judged at the next version_inc.
    if (!window_->SyncLocal().ok()) return true;
    return owner_.NextVersionNeedsExclusive(draining());
  }
  // Without exclusive access the owner only moves its version words, which
  // no client reads: clients go on with the next version at once.
  Status LocalVersionInc(bool exclusive) override {
    auto step = [&] {
      return owner_.StartNextVersion(exclusive, [&](int64_t version) -> Status {
        if (!draining()) return Status::Ok();
        std::vector<uint8_t> bytes(local_bytes());
        owner_.Materialize(version, bytes);
        return Evict(version, std::move(bytes));
      });
    };
    Status s = exclusive ? OnOwnLog(step) : step();
    client_.SetVersion(owner_.version());
    return s;
  }
  Status LocalRestore(int64_t version) override {
    return OnOwnLog([&] { return owner_.RestoreTo(version); });
  }
  Status LocalReload() override {
    CAIRN_RETURN_IF_ERROR(OnOwnLog([&] { return owner_.CheckFormat(); }));
    client_.ForgetCache();
    client_.SetVersion(owner_.version());
    return Status::Ok();
  }

  int64_t LocalVersion() const override { return owner_.version(); }
  int64_t LocalOldest() const override { return owner_.oldest(); }
  uint64_t lineage() const override { return owner_.Read(LogLayout::kLineage); }
  uint64_t memory_bytes() const override { return owner_.MemoryBytes(); }
  uint64_t cleanings() const override { return owner_.Read(LogLayout::kCleanings); }
  LogAccessCounts counts() const override { return client_.counts(); }
  bool compare_and_swap() const override { return use_cas_; }
  VarrayKind kind() const override { return VarrayKind::kLogRma; }
  Status CloseImpl() override {
    window_.reset();  // MPI_Win_free: collective
    return Status::Ok();
  }

 private:
  // Runs a local step between two MPI_Win_syncs: remote writes are seen
  // before it, and its writes before any remote access after the barrier
  // that follows.
  template <typename Fn>
  Status OnOwnLog(Fn&& fn) {
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    Status s = fn();
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    return s;
  }

  std::unique_ptr<RmaWindow> window_;
  LogOwner owner_;
  LogClient client_;
  bool use_cas_;
};

}  // namespace

Result<std::unique_ptr<VersionedArray>> NewLogRmaArray(std::unique_ptr<Comm> comm, Env* env,
                                                       const VarrayOptions& options,
                                                       const Geometry& geometry,
                                                       std::unique_ptr<RmaWindow> window,
                                                       bool use_cas) {
  const LogLayout layout = LogLayout::For(geometry, options.keep, options.log_capacity);
  auto array = std::make_unique<LogRmaArray>(std::move(comm), env, options, geometry,
                                             std::move(window), use_cas, layout);
  CAIRN_RETURN_IF_ERROR(array->Init());
  return std::unique_ptr<VersionedArray>(std::move(array));
}

}  // namespace cairn
