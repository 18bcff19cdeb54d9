#include "varray/log_client.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace cairn {

LogClient::LogClient(RmaWindow* window, const LogLayout& layout, bool use_cas)
    : window_(window), layout_(layout), use_cas_(use_cas), scratch_(layout.block_size) {}

void LogClient::SetEpochs(std::vector<LogEpoch> epochs) {
  cache_.resize(epochs.size());
  for (size_t r = 0; r < epochs.size(); ++r) {
    const bool moved = r >= epochs_.size() || epochs_[r].generation != epochs[r].generation;
    if (moved || cache_[r].empty()) cache_[r].assign(layout_.blocks, kUnknown);
  }
  epochs_ = std::move(epochs);
}

LogClient::BlockRange LogClient::Blocks(uint64_t offset, uint64_t length, uint64_t block_size) {
  if (length == 0) return {offset / block_size, 0};
  const uint64_t first = offset / block_size;
  return {first, (offset + length - 1) / block_size - first + 1};
}

Status LogClient::FetchEntries(int target, uint64_t set, BlockRange r,
                               std::vector<uint64_t>* out) {
  out->resize(r.count);
  CAIRN_RETURN_IF_ERROR(window_->Get(
      target, LogLayout::entry_offset(set, r.first),
      {reinterpret_cast<uint8_t*>(out->data()), 8 * r.count}));
  return window_->Flush(target);
}

Status LogClient::Allocate(int target, uint64_t count, uint64_t* first) {
  const uint64_t bytes = count * layout_.block_size;
  CAIRN_ASSIGN_OR_RETURN(*first, window_->FetchAdd(target, 8 * LogLayout::kTail, bytes));
  if (*first > layout_.capacity || layout_.capacity - *first < bytes) {
    return Error(Code::kNoSpace,
                 "varray log of rank {} is full ({} bytes): versions beyond keep are cleaned "
                 "at version_inc; raise log_capacity or lower keep",
                 target, layout_.capacity);
  }
  return Status::Ok();
}

// Step 2 of the put protocol: the new block starts as the previous
// version's (zeros for a block never written), so that the bytes this put
// does not cover keep their value.
Status LogClient::CopyForward(int target, uint64_t old_loc, uint64_t new_loc) {
  if (old_loc == kUnwrittenBlock) {
    std::fill(scratch_.begin(), scratch_.end(), 0);
  } else {
    CAIRN_RETURN_IF_ERROR(window_->Get(target, old_loc, scratch_));
    CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  }
  CAIRN_RETURN_IF_ERROR(window_->Put(target, new_loc, scratch_));
  return window_->Flush(target);
}

// Where compare-and-swap is unsafe, the block's claim word decides: the
// client whose fetch-and-add finds 0 allocates and publishes; the others
// wait until the entry shows a block of this version. A winner that finds
// the log full releases the claim, and the waiters then fail alike.
Status LogClient::WaitForPublished(int target, uint64_t block, uint64_t* loc, bool* released) {
  const uint64_t entry = LogLayout::entry_offset(epochs_[target].current_set, block);
  for (int polls = 0;; ++polls) {
    // The winner may be descheduled (more ranks than cores): after a few
    // polls, give it the core.
    if (polls > 16) std::this_thread::yield();
    CAIRN_ASSIGN_OR_RETURN(*loc, window_->AtomicLoad(target, entry));
    if (Valid(target, *loc)) return Status::Ok();
    CAIRN_ASSIGN_OR_RETURN(uint64_t claims,
                           window_->AtomicLoad(target, layout_.claim_offset(block)));
    if (claims == 0) {
      *released = true;
      return Status::Ok();
    }
  }
}

Status LogClient::PublishByClaims(int target, const std::vector<FirstBlock>& firsts,
                                  std::vector<uint64_t>* locs) {
  // All claims in one epoch: one round trip whatever the number of blocks.
  const std::vector<uint64_t> ones(firsts.size(), 1);
  std::vector<uint64_t> before(firsts.size());
  for (size_t j = 0; j < firsts.size(); ++j) {
    CAIRN_RETURN_IF_ERROR(window_->StartFetchAdd(target, layout_.claim_offset(firsts[j].block),
                                                 &ones[j], &before[j]));
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  std::vector<size_t> won;
  for (size_t j = 0; j < firsts.size(); ++j) {
    if (before[j] == 0) won.push_back(j);
  }
  uint64_t base = 0;
  Status allocated = won.empty() ? Status::Ok() : Allocate(target, won.size(), &base);
  if (!allocated.ok()) {
    const uint64_t zero = 0;
    for (size_t j : won) {
      CAIRN_RETURN_IF_ERROR(
          window_->StartAtomicStore(target, layout_.claim_offset(firsts[j].block), &zero));
    }
    CAIRN_RETURN_IF_ERROR(window_->Flush(target));
    return allocated;
  }
  std::vector<uint64_t> fresh(won.size());
  for (size_t k = 0; k < won.size(); ++k) {
    fresh[k] = base + k * layout_.block_size;
    const FirstBlock& f = firsts[won[k]];
    if (!f.covered) CAIRN_RETURN_IF_ERROR(CopyForward(target, f.old_loc, fresh[k]));
  }
  for (size_t k = 0; k < won.size(); ++k) {
    const uint64_t entry = LogLayout::entry_offset(epochs_[target].current_set, firsts[won[k]].block);
    CAIRN_RETURN_IF_ERROR(window_->StartAtomicStore(target, entry, &fresh[k]));
    (*locs)[firsts[won[k]].index] = fresh[k];
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  for (size_t j = 0; j < firsts.size(); ++j) {
    if (before[j] == 0) continue;
    ++counts_.claims_lost;
    bool released = false;
    CAIRN_RETURN_IF_ERROR(
        WaitForPublished(target, firsts[j].block, &(*locs)[firsts[j].index], &released));
    if (released) {
      return Error(Code::kNoSpace, "varray log of rank {} is full ({} bytes)", target,
                   layout_.capacity);
    }
  }
  return Status::Ok();
}

Status LogClient::PublishByCas(int target, const std::vector<FirstBlock>& firsts,
                               std::vector<uint64_t>* locs) {
  // Steps 1-3 for all first blocks at once: one fetch-and-add allocates
  // them back to back (so the data goes in one access), the copies
  // complete before any block is published, and the compare-and-swaps go
  // in one epoch.
  uint64_t base = 0;
  CAIRN_RETURN_IF_ERROR(Allocate(target, firsts.size(), &base));
  std::vector<uint64_t> fresh(firsts.size()), expected(firsts.size()), found(firsts.size());
  for (size_t j = 0; j < firsts.size(); ++j) {
    fresh[j] = base + j * layout_.block_size;
    expected[j] = firsts[j].old_loc;
    if (!firsts[j].covered) CAIRN_RETURN_IF_ERROR(CopyForward(target, expected[j], fresh[j]));
  }
  for (size_t j = 0; j < firsts.size(); ++j) {
    const uint64_t entry = LogLayout::entry_offset(epochs_[target].current_set, firsts[j].block);
    CAIRN_RETURN_IF_ERROR(
        window_->StartCompareAndSwap(target, entry, &expected[j], &fresh[j], &found[j]));
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  for (size_t j = 0; j < firsts.size(); ++j) {
    // Another client published first: its block (already a copy of the
    // previous version) is the one to write; ours stays unused until
    // cleaning.
    const bool won = found[j] == expected[j];
    if (!won) ++counts_.claims_lost;
    (*locs)[firsts[j].index] = won ? fresh[j] : found[j];
  }
  return Status::Ok();
}

Status LogClient::Locate(int target, BlockRange r, uint64_t offset, uint64_t length, bool acc,
                         std::vector<uint64_t>* locs) {
  locs->assign(r.count, kUnknown);
  bool all_valid = true;
  for (uint64_t i = 0; i < r.count; ++i) {
    (*locs)[i] = Cached(target, r.first + i);
    if (!Valid(target, (*locs)[i])) all_valid = false;
  }
  if (all_valid) {
    counts_.put_ow_hit += r.count;
    return Status::Ok();
  }
  std::vector<uint64_t> entries;
  CAIRN_RETURN_IF_ERROR(FetchEntries(target, epochs_[target].current_set, r, &entries));
  const uint64_t bs = layout_.block_size;
  std::vector<FirstBlock> firsts;  // blocks first written in this version
  for (uint64_t i = 0; i < r.count; ++i) {
    if (Valid(target, (*locs)[i])) {
      ++counts_.put_ow_hit;
    } else if (Valid(target, entries[i])) {
      ++counts_.put_ow_miss;
      (*locs)[i] = Cached(target, r.first + i) = entries[i];
    } else {
      ++counts_.put_first;
      const uint64_t start = (r.first + i) * bs;
      const bool covered = !acc && start >= offset && start + bs <= offset + length;
      firsts.push_back({i, r.first + i, entries[i], covered});
    }
  }
  if (firsts.empty()) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(use_cas_ ? PublishByCas(target, firsts, locs)
                                 : PublishByClaims(target, firsts, locs));
  for (const FirstBlock& f : firsts) Cached(target, f.block) = (*locs)[f.index];
  return Status::Ok();
}

Status LogClient::MoveBytes(Move move, int target, uint64_t offset, std::span<uint8_t> buffer,
                            const std::vector<uint64_t>& locs, std::optional<RmaElement> type,
                            const std::vector<bool>* only) {
  const uint64_t bs = layout_.block_size;
  auto piece_at = [&](size_t i, uint64_t pos) {
    const uint64_t start = i == 0 ? offset % bs : 0;
    return std::min(bs - start, buffer.size() - pos);
  };
  auto included = [&](size_t i) { return only == nullptr || (*only)[i]; };
  uint64_t pos = 0;
  size_t i = 0;
  while (i < locs.size()) {
    const uint64_t piece = piece_at(i, pos);
    if (!included(i) || locs[i] == kUnwrittenBlock) {
      if (included(i) && move == Move::kRead) std::memset(buffer.data() + pos, 0, piece);
      pos += piece;
      ++i;
      continue;
    }
    const uint64_t at = locs[i] + (i == 0 ? offset % bs : 0);
    uint64_t run = piece;
    size_t j = i + 1;
    while (j < locs.size() && included(j) && locs[j] != kUnwrittenBlock &&
           locs[j] == locs[j - 1] + bs) {
      run += piece_at(j, pos + run);
      ++j;
    }
    std::span<uint8_t> bytes = buffer.subspan(pos, run);
    switch (move) {
      case Move::kRead: CAIRN_RETURN_IF_ERROR(window_->Get(target, at, bytes)); break;
      case Move::kWrite: CAIRN_RETURN_IF_ERROR(window_->Put(target, at, bytes)); break;
      case Move::kAccumulate:
        CAIRN_RETURN_IF_ERROR(window_->Accumulate(target, at, bytes, *type));
        break;
    }
    pos += run;
    i = j;
  }
  return Status::Ok();
}

Status LogClient::Write(int target, uint64_t offset, std::span<const uint8_t> data,
                        std::optional<RmaElement> acc) {
  const BlockRange r = Blocks(offset, data.size(), layout_.block_size);
  if (r.count == 0) return Status::Ok();
  std::vector<uint64_t> locs;
  CAIRN_RETURN_IF_ERROR(Locate(target, r, offset, data.size(), acc.has_value(), &locs));
  // The window only reads from the buffer; the span is non-const because
  // MoveBytes serves reads too.
  std::span<uint8_t> bytes(const_cast<uint8_t*>(data.data()), data.size());
  CAIRN_RETURN_IF_ERROR(MoveBytes(acc ? Move::kAccumulate : Move::kWrite, target, offset, bytes,
                                  locs, acc, nullptr));
  // Step 4 completes before the call returns: the caller may reuse data.
  return window_->Flush(target);
}

Status LogClient::StartRead(int target, uint64_t offset, std::span<uint8_t> into) {
  const BlockRange r = Blocks(offset, into.size(), layout_.block_size);
  if (r.count == 0) return Status::Ok();
  PendingRead p;
  p.target = target;
  p.offset = offset;
  p.into = into;
  p.used.resize(r.count);
  std::vector<bool> known(r.count);
  bool all_valid = true;
  for (uint64_t i = 0; i < r.count; ++i) {
    p.used[i] = Cached(target, r.first + i);
    known[i] = p.used[i] != kUnknown;
    if (Valid(target, p.used[i])) {
      ++counts_.get_hit;
    } else {
      ++counts_.get_miss;
      all_valid = false;
    }
  }
  CAIRN_RETURN_IF_ERROR(MoveBytes(Move::kRead, target, offset, into, p.used, std::nullopt, &known));
  if (!all_valid) {
    p.fetched.resize(r.count);
    CAIRN_RETURN_IF_ERROR(window_->Get(
        target, LogLayout::entry_offset(epochs_[target].current_set, r.first),
        {reinterpret_cast<uint8_t*>(p.fetched.data()), 8 * r.count}));
  }
  pending_.push_back(std::move(p));
  return Status::Ok();
}

Status LogClient::FinishReads() {
  if (pending_.empty()) return Status::Ok();
  std::vector<PendingRead> reads = std::move(pending_);
  pending_.clear();
  CAIRN_RETURN_IF_ERROR(window_->FlushAll());
  bool reread = false;
  for (PendingRead& p : reads) {
    if (p.fetched.empty()) continue;
    const uint64_t first = p.offset / layout_.block_size;
    std::vector<bool> stale(p.used.size());
    for (size_t i = 0; i < p.used.size(); ++i) {
      Cached(p.target, first + i) = p.fetched[i];
      stale[i] = p.fetched[i] != p.used[i];
      reread = reread || stale[i];
    }
    CAIRN_RETURN_IF_ERROR(
        MoveBytes(Move::kRead, p.target, p.offset, p.into, p.fetched, std::nullopt, &stale));
  }
  return reread ? window_->FlushAll() : Status::Ok();
}

Status LogClient::ReadFrozen(int target, uint64_t set, uint64_t offset, std::span<uint8_t> into) {
  const BlockRange r = Blocks(offset, into.size(), layout_.block_size);
  if (r.count == 0) return Status::Ok();
  std::vector<uint64_t> entries;
  CAIRN_RETURN_IF_ERROR(FetchEntries(target, set, r, &entries));
  CAIRN_RETURN_IF_ERROR(MoveBytes(Move::kRead, target, offset, into, entries, std::nullopt, nullptr));
  return window_->Flush(target);
}

}  // namespace cairn
