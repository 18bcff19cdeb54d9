#include "pmem/in_place_array.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/log.h"
#include "format/pmem_array_layout.h"
#include "pmem/flush.h"

namespace cairn::pmem {
namespace {

// Adds `added` to sorted, disjoint ranges, merging it with every range it
// overlaps or touches (the usual case, ranges reported in order, appends to
// or extends the last one).
template <typename Range>
void InsertMerged(std::vector<Range>* ranges, Range added) {
  auto first = std::lower_bound(ranges->begin(), ranges->end(), added.begin,
                                [](const Range& r, uint64_t begin) { return r.end < begin; });
  auto last = first;
  for (; last != ranges->end() && last->begin <= added.end; ++last) {
    added.begin = std::min(added.begin, last->begin);
    added.end = std::max(added.end, last->end);
  }
  ranges->insert(ranges->erase(first, last), added);
}

// How many of n elements of `size` bytes are equal in a and b. The common
// sizes compare as words, a loop the compiler vectorises (a memcmp call
// per element cost a 32 MiB array two native stencil sweeps).
template <typename Word>
uint64_t CountEqualWords(const uint8_t* a, const uint8_t* b, uint64_t n) {
  uint64_t equal = 0;
  for (uint64_t i = 0; i < n; ++i) {
    Word x, y;
    std::memcpy(&x, a + i * sizeof(Word), sizeof(Word));
    std::memcpy(&y, b + i * sizeof(Word), sizeof(Word));
    equal += x == y;
  }
  return equal;
}

uint64_t CountEqualElements(const uint8_t* a, const uint8_t* b, uint64_t n, uint64_t size) {
  switch (size) {
    case 8: return CountEqualWords<uint64_t>(a, b, n);
    case 4: return CountEqualWords<uint32_t>(a, b, n);
    default: break;
  }
  uint64_t equal = 0;
  for (uint64_t i = 0; i < n; ++i) equal += std::memcmp(a + i * size, b + i * size, size) == 0;
  return equal;
}

}  // namespace

const char* PersistModeName(PersistMode mode) {
  switch (mode) {
    case PersistMode::kProfiling: return "profiling";
    case PersistMode::kInPlace: return "in-place";
    case PersistMode::kCopy: return "copy";
  }
  return "?";
}

Result<std::unique_ptr<InPlaceArray>> InPlaceArray::Open(const std::string& path, uint64_t count,
                                                         uint64_t elem_size,
                                                         const InPlaceArrayOptions& options) {
  const std::optional<PmemArrayShape> shape = PmemArrayShapeFor(count, elem_size);
  if (!shape) {
    return Error(Code::kInvalidArgument, "persistent array '{}': bad shape {} x {} bytes", path,
                 count, elem_size);
  }
  std::unique_ptr<InPlaceArray> a(new InPlaceArray);
  a->flusher_ = options.flusher;
  auto existing = PmemMap::OpenExisting(path);
  if (existing.ok()) {
    a->map_ = std::move(existing).value();
    CAIRN_RETURN_IF_ERROR(a->Load(count, elem_size));
  } else if (existing.status().code() == Code::kNotFound) {
    a->count_ = count;
    a->elem_size_ = elem_size;
    a->copy_bytes_ = shape->copy_bytes;
    CAIRN_ASSIGN_OR_RETURN(a->map_, PmemMap::Create(path, shape->FileBytes()));
    CAIRN_RETURN_IF_ERROR(a->Format(*shape));
  } else {
    return existing.status();
  }
  // Both copies are written from the first iterations on: fault them in
  // now, not one page per store in the application's loop.
  CAIRN_RETURN_IF_ERROR(a->map_->Prefault(kPmemArrayHeaderBytes, 2 * a->copy_bytes_));
  switch (options.pattern) {
    case UpdatePattern::kUniform:
      a->mode_ = PersistMode::kInPlace;
      a->mode_reason_ = "declared uniform: every element is written every iteration";
      break;
    case UpdatePattern::kNonUniform:
      a->mode_ = PersistMode::kCopy;
      a->mode_reason_ = "declared non-uniform: copy with non-temporal stores at each commit";
      break;
    case UpdatePattern::kAuto:
      a->mode_ = PersistMode::kProfiling;
      a->mode_reason_ = "profiling the first iteration (copy-based until it is committed)";
      break;
  }
  if (a->mode_ != PersistMode::kInPlace) {
    // The application's one array: the last committed data, or zeros.
    a->dram_ = std::make_unique<uint8_t[]>(a->copy_bytes_);
    if (a->iteration_ != kNoIteration) {
      std::memcpy(a->dram_.get(), a->Copy(a->consistent_index_), count * elem_size);
    }
  }
  a->AssignRoles();
  return a;
}

InPlaceArray::~InPlaceArray() {
  // The flusher may still hold our working version: it must be done with
  // it before the mapping goes.
  if (!submitted_.empty()) flusher_->Barrier();
}

Status InPlaceArray::Format(const PmemArrayShape& shape) {
  uint8_t* p = map_->data();
  std::memset(p, 0, kPmemArrayHeaderBytes);
  EncodePmemArrayHeader(shape, p);
  Persist(p, kPmemArrayHeaderBytes);
  return map_->PersistMedium(p, kPmemArrayHeaderBytes);
}

Status InPlaceArray::Load(uint64_t count, uint64_t elem_size) {
  const uint8_t* p = map_->data();
  const std::string& path = map_->path();
  CAIRN_ASSIGN_OR_RETURN(PmemArrayShape h, DecodePmemArrayHeader(p, map_->size(), path));
  if (h.elem_size != elem_size || h.count != count) {
    return Error(Code::kMismatch,
                 "persistent array '{}' holds {} elements of {} bytes, not {} of {} bytes", path,
                 h.count, h.elem_size, count, elem_size);
  }
  count_ = count;
  elem_size_ = elem_size;
  copy_bytes_ = h.copy_bytes;
  // The newest valid record wins; a torn one (bad CRC) is the commit that
  // did not finish, and the other slot holds the one before it.
  if (std::optional<EpochRecord> newest = NewestEpochRecord(p)) {
    iteration_ = newest->iteration;
    consistent_index_ = newest->consistent;
  }
  return Status::Ok();
}

uint8_t* InPlaceArray::Copy(int index) const {
  return map_->data() + kPmemArrayHeaderBytes + static_cast<uint64_t>(index) * copy_bytes_;
}

void InPlaceArray::AssignRoles() {
  consistent_ = Copy(consistent_index_);
  if (mode_ == PersistMode::kInPlace) {
    working_ = Copy(1 - consistent_index_);
    consistent_for_reads_ = consistent_;
  } else {
    working_ = dram_.get();
    consistent_for_reads_ = dram_.get();  // one array: reads see the latest writes
  }
  updated_ = false;
  batch_ = {};
  submitted_.clear();
}

Status InPlaceArray::DoneWriting(uint64_t first, uint64_t n) {
  if (first > count_ || n > count_ - first) {
    return Error(Code::kInvalidArgument,
                 "persistent array '{}': elements [{}, {}) are outside its {} elements",
                 map_->path(), first, first + n, count_);
  }
  if (flusher_ == nullptr || n == 0) return Status::Ok();
  const ByteRange done{first * elem_size_, (first + n) * elem_size_};
  if (batch_.end > batch_.begin && batch_.end == done.begin) {
    batch_.end = done.end;
  } else {
    SubmitBatch();
    batch_ = done;
  }
  if (batch_.end - batch_.begin >= kFlushBatchBytes) SubmitBatch();
  return Status::Ok();
}

void InPlaceArray::StartFlush() {
  if (flusher_ == nullptr) return;
  // The whole array is done: hand over everything not handed over yet,
  // now (no batching: nothing adjacent will follow).
  SubmitBatch();
  std::vector<ByteRange> gaps;
  ForEachUnsubmitted([&](uint64_t begin, uint64_t end) { gaps.push_back({begin, end}); });
  for (const ByteRange& gap : gaps) {
    batch_ = gap;
    SubmitBatch();
  }
}

template <typename Fn>
void InPlaceArray::ForEachUnsubmitted(Fn fn) const {
  uint64_t covered = 0;
  for (const ByteRange& r : submitted_) {
    if (r.begin > covered) fn(covered, r.begin);
    covered = r.end;
  }
  if (covered < count_ * elem_size_) fn(covered, count_ * elem_size_);
}

void InPlaceArray::SubmitBatch() {
  if (batch_.end == batch_.begin) return;
  const uint64_t n = batch_.end - batch_.begin;
  if (mode_ == PersistMode::kInPlace) {
    flusher_->Submit(working_ + batch_.begin, n);
  } else {
    // Copy and profiling modes: the helper streams the finished part of
    // the DRAM array into the copy the commit will name.
    flusher_->SubmitCopy(Copy(1 - consistent_index_) + batch_.begin, dram_.get() + batch_.begin, n);
  }
  InsertMerged(&submitted_, batch_);
  batch_ = {};
}

Status InPlaceArray::PersistRecord(int64_t iteration, int index) {
  uint8_t* line = map_->data() + kEpochRecordOffset[iteration % 2];
  uint8_t record[kEpochRecordBytes];
  EncodeEpochRecord({iteration, index,
                     mode_ == PersistMode::kInPlace ? EpochMode::kInPlace : EpochMode::kCopy},
                    record);
  std::memcpy(line, record, sizeof(record));
  Persist(line, sizeof(record));
  return map_->PersistMedium(line, sizeof(record));
}

Status InPlaceArray::PersistCopyMode(int target) {
  const uint64_t bytes = count_ * elem_size_;
  const FlushOps& ops = Ops();
  // As in place: this thread copies what the helper was not handed, then
  // waits for the helper's remainder.
  ForEachUnsubmitted([&](uint64_t begin, uint64_t end) {
    ops.copy_nt(Copy(target) + begin, dram_.get() + begin, end - begin);
  });
  ops.drain();
  if (!submitted_.empty()) flusher_->Barrier();
  return map_->PersistMedium(Copy(target), bytes);
}

void InPlaceArray::ChooseModeFromProfile(const uint8_t* previous) {
  const uint64_t unchanged = CountEqualElements(dram_.get(), previous, count_, elem_size_);
  if (unchanged == 0) {
    mode_ = PersistMode::kInPlace;
    mode_reason_ = fmt::format("profiled iteration {} wrote every element: in-place versioning",
                               iteration_ + 1);
  } else {
    // An element that kept its value may have been skipped: the safe
    // choice is copying (a uniform update that happens to repeat a value
    // only costs the copy).
    mode_ = PersistMode::kCopy;
    mode_reason_ = fmt::format(
        "profiled iteration {} left {} of {} elements unchanged (non-uniform update): copy with "
        "non-temporal stores at each commit",
        iteration_ + 1, unchanged, count_);
  }
  Log(LogLevel::kInfo, "persistent array '{}': {}", map_->path(), mode_reason_);
}

Status InPlaceArray::PersistInPlace() {
  const uint64_t bytes = count_ * elem_size_;
  const FlushOps& ops = Ops();
  // Everything the flusher was not handed is flushed here, by this thread,
  // while the helper finishes its queue: the last batch (just written, and
  // handing it over would only add a wake-up to the wait) and whatever was
  // never reported (all of it without a flusher: on this machine's Zen 3 a
  // clwb of a line just written costs the application thread more than one
  // of a line already evicted, so the flush is left to the commit;
  // docs/pmem.md).
  ForEachUnsubmitted(
      [&](uint64_t begin, uint64_t end) { ops.flush_lines(working_ + begin, end - begin); });
  ops.drain();
  // Then only the remainder of the helper's share: it has been flushing
  // since the ranges were reported.
  if (!submitted_.empty()) flusher_->Barrier();
  return map_->PersistMedium(working_, bytes);
}

Status InPlaceArray::Commit() {
  const int target = 1 - consistent_index_;
  if (mode_ == PersistMode::kInPlace) {
    CAIRN_RETURN_IF_ERROR(PersistInPlace());
  } else {
    CAIRN_RETURN_IF_ERROR(PersistCopyMode(target));
  }
  // Profile before the record flips: `consistent_` is still the previous
  // iteration.
  const bool profiled = mode_ == PersistMode::kProfiling && iteration_ != kNoIteration;
  if (profiled) ChooseModeFromProfile(consistent_);
  CAIRN_RETURN_IF_ERROR(PersistRecord(iteration_ + 1, target));
  ++iteration_;
  consistent_index_ = target;
  if (mode_ == PersistMode::kInPlace) dram_.reset();
  AssignRoles();
  return Status::Ok();
}

}  // namespace cairn::pmem
