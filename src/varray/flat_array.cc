// The flat array, the baseline (paper Table I, Flat-RMA): each rank's
// window holds keep + 1 copies of its partition in a ring; version_inc
// copies the open version's slot into the next one, so it costs a copy of
// the whole partition however little changed.
#include <cstring>

#include "varray/varray.h"

namespace cairn {
namespace {

// Header words at the start of the window.
enum FlatWord : uint64_t { kMagic = 0, kVersion = 1, kOldest = 2, kLineage = 3, kSlots = 4,
                           kSlotBytes = 5, kHeaderBytes = 64 };
constexpr uint64_t kFlatMagic = 0x3154414c46414156ull;  // marks memory that holds a flat varray

class FlatArray final : public VersionedArray {
 public:
  FlatArray(std::unique_ptr<Comm> comm, Env* env, const VarrayOptions& options,
            const Geometry& geometry, std::unique_ptr<RmaWindow> window)
      : VersionedArray(std::move(comm), env, options, geometry),
        window_(std::move(window)),
        slots_(options.keep + 1),
        slot_bytes_((geometry.max_local_bytes() + 7) / 8 * 8) {}
  ~FlatArray() override { (void)Close(); }

  static uint64_t WindowBytes(const Geometry& g, uint64_t keep) {
    return kHeaderBytes + (keep + 1) * ((g.max_local_bytes() + 7) / 8 * 8);
  }

  Status Init() {
    CAIRN_ASSIGN_OR_RETURN(uint64_t lineage, NewLineage(comm()));
    std::memset(window_->local().data(), 0, kHeaderBytes);
    std::memset(Slot(0), 0, local_bytes());  // version 0 starts as zeros
    Store(kMagic, kFlatMagic);
    Store(kLineage, lineage);
    Store(kSlots, slots_);
    Store(kSlotBytes, slot_bytes_);
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    CAIRN_RETURN_IF_ERROR(comm().Barrier());
    return Start();
  }

  std::span<uint8_t> state() override { return window_->local(); }

 protected:
  Status WritePiece(int rank, uint64_t offset, std::span<const uint8_t> data,
                    std::optional<RmaElement> acc) override {
    const uint64_t at = SlotOffset(version()) + offset;
    if (acc) {
      CAIRN_RETURN_IF_ERROR(window_->Accumulate(rank, at, data, *acc));
    } else {
      CAIRN_RETURN_IF_ERROR(window_->Put(rank, at, data));
    }
    return window_->Flush(rank);
  }
  Status StartReadPiece(int rank, uint64_t offset, std::span<uint8_t> into) override {
    pending_ = true;
    return window_->Get(rank, SlotOffset(version()) + offset, into);
  }
  Status FinishReads() override {
    if (!pending_) return Status::Ok();
    pending_ = false;
    return window_->FlushAll();
  }
  bool reads_pending() const override { return pending_; }
  Status ReadFrozenPiece(int rank, int64_t version, uint64_t offset,
                         std::span<uint8_t> into) override {
    CAIRN_RETURN_IF_ERROR(window_->Get(rank, SlotOffset(version) + offset, into));
    return window_->Flush(rank);
  }
  // The copy goes into the slot clients write next.
  bool VersionIncNeedsExclusive() const override { return true; }
  Status LocalVersionInc(bool) override {
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    const int64_t current = LocalVersion();
    const int64_t next = current + 1;
    if (LocalOldest() < next - static_cast<int64_t>(slots_ - 1)) {
      if (draining()) {
        const uint8_t* old = Slot(LocalOldest());
        CAIRN_RETURN_IF_ERROR(
            Evict(LocalOldest(), std::vector<uint8_t>(old, old + local_bytes())));
      }
      Store(kOldest, static_cast<uint64_t>(LocalOldest() + 1));
    }
    std::memcpy(Slot(next), Slot(current), local_bytes());  // the flat array's cost
    Store(kVersion, static_cast<uint64_t>(next));
    return window_->SyncLocal();
  }
  Status LocalRestore(int64_t version) override {
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    std::memcpy(Slot(LocalVersion()), Slot(version), local_bytes());
    return window_->SyncLocal();
  }
  Status LocalReload() override {
    CAIRN_RETURN_IF_ERROR(window_->SyncLocal());
    if (Load(kMagic) != kFlatMagic || Load(kSlots) != slots_ || Load(kSlotBytes) != slot_bytes_ ||
        Load(kOldest) > Load(kVersion)) {
      return Error(Code::kCorrupt,
                   "flat varray: restored memory is not a flat array of {} slots of {} bytes",
                   slots_, slot_bytes_);
    }
    return Status::Ok();
  }
  int64_t LocalVersion() const override { return static_cast<int64_t>(Load(kVersion)); }
  int64_t LocalOldest() const override { return static_cast<int64_t>(Load(kOldest)); }
  uint64_t lineage() const override { return Load(kLineage); }
  uint64_t memory_bytes() const override {
    return kHeaderBytes + static_cast<uint64_t>(LocalVersion() - LocalOldest() + 1) * local_bytes();
  }
  VarrayKind kind() const override { return VarrayKind::kFlat; }
  Status CloseImpl() override {
    window_.reset();
    return Status::Ok();
  }

 private:
  uint64_t SlotOffset(int64_t version) const {
    return kHeaderBytes + (static_cast<uint64_t>(version) % slots_) * slot_bytes_;
  }
  uint8_t* Slot(int64_t version) { return window_->local().data() + SlotOffset(version); }
  uint64_t Load(uint64_t word) const {
    uint64_t v;
    std::memcpy(&v, window_->local().data() + 8 * word, 8);
    return v;
  }
  void Store(uint64_t word, uint64_t value) {
    std::memcpy(window_->local().data() + 8 * word, &value, 8);
  }

  std::unique_ptr<RmaWindow> window_;
  uint64_t slots_;
  uint64_t slot_bytes_;
  bool pending_ = false;
};

}  // namespace

Result<std::unique_ptr<VersionedArray>> NewFlatArray(std::unique_ptr<Comm> comm, Env* env,
                                                     const VarrayOptions& options,
                                                     const Geometry& geometry) {
  CAIRN_ASSIGN_OR_RETURN(auto window,
                         NewRmaWindow(*comm, FlatArray::WindowBytes(geometry, options.keep)));
  auto array =
      std::make_unique<FlatArray>(std::move(comm), env, options, geometry, std::move(window));
  CAIRN_RETURN_IF_ERROR(array->Init());
  return std::unique_ptr<VersionedArray>(std::move(array));
}

}  // namespace cairn
