#include "varray/log_client.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace cairn {

LogClient::LogClient(RmaWindow* window, const LogLayout& layout, bool use_cas)
    : window_(window), layout_(layout), use_cas_(use_cas) {
  ForgetCache();
}

void LogClient::ForgetCache() {
  cache_.assign(static_cast<size_t>(window_->size()),
                std::vector<uint64_t>(layout_.blocks, kUnknown));
}

LogClient::BlockRange LogClient::Blocks(uint64_t offset, uint64_t length, uint64_t block_size) {
  if (length == 0) return {offset / block_size, 0};
  const uint64_t first = offset / block_size;
  return {first, (offset + length - 1) / block_size - first + 1};
}

Status LogClient::FetchEntries(int target, BlockRange r, std::vector<uint64_t>* out) {
  out->resize(r.count);
  CAIRN_RETURN_IF_ERROR(window_->Get(target, layout_.entry_offset(r.first),
                                     {reinterpret_cast<uint8_t*>(out->data()), 8 * r.count}));
  return window_->Flush(target);
}

Status LogClient::Allocate(int target, uint64_t count, uint64_t* first_slot) {
  CAIRN_ASSIGN_OR_RETURN(*first_slot, window_->FetchAdd(target, 8 * LogLayout::kTail, count));
  if (*first_slot > layout_.slots || layout_.slots - *first_slot < count) {
    return Error(Code::kNoSpace,
                 "varray log of rank {} is full ({} blocks of {} bytes): versions beyond keep "
                 "are cleaned at version_inc; raise log_capacity or lower keep",
                 target, layout_.slots, layout_.block_size);
  }
  return Status::Ok();
}

// Step 2 of the put protocol, for blocks allocated back to back: each new
// block links to the entry it replaces (how frozen versions reach the old
// bytes), and starts as the previous version's bytes (zeros for a block
// never written) so that the bytes this put does not cover keep their
// value. Every old block is read in one epoch, every new block and link
// written in the next.
Status LogClient::Prepare(int target, const std::vector<FirstBlock>& firsts,
                          const std::vector<size_t>& pick, uint64_t first_slot) {
  const uint64_t bs = layout_.block_size;
  std::vector<uint64_t> links(pick.size());
  scratch_.assign(pick.size() * bs, 0);
  bool fetched = false;
  for (size_t k = 0; k < pick.size(); ++k) {
    const FirstBlock& f = firsts[pick[k]];
    links[k] = f.old_entry;
    if (f.covered || f.old_entry == kUnwrittenBlock) continue;
    CAIRN_RETURN_IF_ERROR(window_->Get(target, layout_.slot_location(EntrySlot(f.old_entry)),
                                       {scratch_.data() + k * bs, bs}));
    fetched = true;
  }
  if (fetched) CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  CAIRN_RETURN_IF_ERROR(window_->Put(target, layout_.link_offset(first_slot),
                                     {reinterpret_cast<uint8_t*>(links.data()), 8 * links.size()}));
  for (size_t k = 0; k < pick.size(); ++k) {
    const FirstBlock& f = firsts[pick[k]];
    if (f.covered) continue;
    CAIRN_RETURN_IF_ERROR(
        window_->Put(target, layout_.slot_location(first_slot + k), {scratch_.data() + k * bs, bs}));
  }
  // The block is complete before any rank can find it through the table.
  return window_->Flush(target);
}

// Where compare-and-swap is unsafe, the block's claim word decides: each
// client swaps in version + 1; the one that found another value allocates
// and publishes, the others wait until the entry shows a block of this
// version. A winner that finds the log full puts the old claim back, and
// the waiters then fail alike.
Status LogClient::WaitForPublished(int target, uint64_t block, uint64_t* entry, bool* released) {
  const uint64_t claimed = static_cast<uint64_t>(version_) + 1;
  for (int polls = 0;; ++polls) {
    // The winner may be descheduled (more ranks than cores): after a few
    // polls, give it the core.
    if (polls > 16) std::this_thread::yield();
    CAIRN_ASSIGN_OR_RETURN(*entry, window_->AtomicLoad(target, layout_.entry_offset(block)));
    if (Valid(*entry)) return Status::Ok();
    CAIRN_ASSIGN_OR_RETURN(uint64_t claim, window_->AtomicLoad(target, layout_.claim_offset(block)));
    if (claim != claimed) {
      *released = true;
      return Status::Ok();
    }
  }
}

Status LogClient::PublishByClaims(int target, const std::vector<FirstBlock>& firsts,
                                  std::vector<uint64_t>* entries) {
  // All claims in one epoch: one round trip whatever the number of blocks.
  const uint64_t claimed = static_cast<uint64_t>(version_) + 1;
  std::vector<uint64_t> before(firsts.size());
  for (size_t j = 0; j < firsts.size(); ++j) {
    CAIRN_RETURN_IF_ERROR(window_->StartSwap(target, layout_.claim_offset(firsts[j].block),
                                             &claimed, &before[j]));
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  std::vector<size_t> won;
  for (size_t j = 0; j < firsts.size(); ++j) {
    if (before[j] != claimed) won.push_back(j);
  }
  uint64_t base = 0;
  Status allocated = won.empty() ? Status::Ok() : Allocate(target, won.size(), &base);
  if (!allocated.ok()) {
    for (size_t j : won) {
      CAIRN_RETURN_IF_ERROR(
          window_->StartAtomicStore(target, layout_.claim_offset(firsts[j].block), &before[j]));
    }
    CAIRN_RETURN_IF_ERROR(window_->Flush(target));
    return allocated;
  }
  if (!won.empty()) CAIRN_RETURN_IF_ERROR(Prepare(target, firsts, won, base));
  std::vector<uint64_t> fresh(won.size());
  for (size_t k = 0; k < won.size(); ++k) {
    fresh[k] = MakeEntry(version_, base + k);
    CAIRN_RETURN_IF_ERROR(window_->StartAtomicStore(
        target, layout_.entry_offset(firsts[won[k]].block), &fresh[k]));
    (*entries)[firsts[won[k]].index] = fresh[k];
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  for (size_t j = 0; j < firsts.size(); ++j) {
    if (before[j] != claimed) continue;
    ++counts_.claims_lost;
    bool released = false;
    CAIRN_RETURN_IF_ERROR(
        WaitForPublished(target, firsts[j].block, &(*entries)[firsts[j].index], &released));
    if (released) {
      return Error(Code::kNoSpace, "varray log of rank {} is full ({} blocks of {} bytes)",
                   target, layout_.slots, layout_.block_size);
    }
  }
  return Status::Ok();
}

Status LogClient::PublishByCas(int target, const std::vector<FirstBlock>& firsts,
                               std::vector<uint64_t>* entries) {
  // Steps 1-3 for all first blocks at once: one fetch-and-add allocates
  // them back to back (so the data goes in one access), the copies
  // complete before any block is published, and the compare-and-swaps go
  // in one epoch.
  uint64_t base = 0;
  CAIRN_RETURN_IF_ERROR(Allocate(target, firsts.size(), &base));
  std::vector<size_t> all(firsts.size());
  for (size_t j = 0; j < all.size(); ++j) all[j] = j;
  CAIRN_RETURN_IF_ERROR(Prepare(target, firsts, all, base));
  std::vector<uint64_t> fresh(firsts.size()), expected(firsts.size()), found(firsts.size());
  for (size_t j = 0; j < firsts.size(); ++j) {
    fresh[j] = MakeEntry(version_, base + j);
    expected[j] = firsts[j].old_entry;
    CAIRN_RETURN_IF_ERROR(window_->StartCompareAndSwap(
        target, layout_.entry_offset(firsts[j].block), &expected[j], &fresh[j], &found[j]));
  }
  CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  for (size_t j = 0; j < firsts.size(); ++j) {
    // Another client published first: its block (already a copy of the
    // previous version) is the one to write; ours stays unused until
    // cleaning.
    const bool won = found[j] == expected[j];
    if (!won) ++counts_.claims_lost;
    (*entries)[firsts[j].index] = won ? fresh[j] : found[j];
  }
  return Status::Ok();
}

Status LogClient::Locate(int target, BlockRange r, uint64_t offset, uint64_t length, bool acc,
                         std::vector<uint64_t>* entries) {
  entries->assign(r.count, kUnknown);
  bool all_valid = true;
  for (uint64_t i = 0; i < r.count; ++i) {
    (*entries)[i] = Cached(target, r.first + i);
    if (!Valid((*entries)[i])) all_valid = false;
  }
  if (all_valid) {
    counts_.put_ow_hit += r.count;
    return Status::Ok();
  }
  std::vector<uint64_t> fetched;
  CAIRN_RETURN_IF_ERROR(FetchEntries(target, r, &fetched));
  const uint64_t bs = layout_.block_size;
  std::vector<FirstBlock> firsts;  // blocks first written in this version
  for (uint64_t i = 0; i < r.count; ++i) {
    if (Valid((*entries)[i])) {
      ++counts_.put_ow_hit;
    } else if (Valid(fetched[i])) {
      ++counts_.put_ow_miss;
      (*entries)[i] = Cached(target, r.first + i) = fetched[i];
    } else {
      ++counts_.put_first;
      const uint64_t start = (r.first + i) * bs;
      const bool covered = !acc && start >= offset && start + bs <= offset + length;
      firsts.push_back({i, r.first + i, fetched[i], covered});
    }
  }
  if (firsts.empty()) return Status::Ok();
  CAIRN_RETURN_IF_ERROR(use_cas_ ? PublishByCas(target, firsts, entries)
                                 : PublishByClaims(target, firsts, entries));
  for (const FirstBlock& f : firsts) Cached(target, f.block) = (*entries)[f.index];
  return Status::Ok();
}

Status LogClient::MoveBytes(Move move, int target, uint64_t offset, std::span<uint8_t> buffer,
                            const std::vector<uint64_t>& entries, std::optional<RmaElement> type,
                            const std::vector<bool>* only) {
  const uint64_t bs = layout_.block_size;
  auto piece_at = [&](size_t i, uint64_t pos) {
    const uint64_t start = i == 0 ? offset % bs : 0;
    return std::min(bs - start, buffer.size() - pos);
  };
  auto included = [&](size_t i) { return only == nullptr || (*only)[i]; };
  auto written = [&](size_t i) { return entries[i] != kUnwrittenBlock; };
  uint64_t pos = 0;
  size_t i = 0;
  while (i < entries.size()) {
    const uint64_t piece = piece_at(i, pos);
    if (!included(i) || !written(i)) {
      if (included(i) && move == Move::kRead) std::memset(buffer.data() + pos, 0, piece);
      pos += piece;
      ++i;
      continue;
    }
    const uint64_t at = layout_.slot_location(EntrySlot(entries[i])) + (i == 0 ? offset % bs : 0);
    uint64_t run = piece;
    size_t j = i + 1;
    while (j < entries.size() && included(j) && written(j) &&
           EntrySlot(entries[j]) == EntrySlot(entries[j - 1]) + 1) {
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
  std::vector<uint64_t> entries;
  CAIRN_RETURN_IF_ERROR(Locate(target, r, offset, data.size(), acc.has_value(), &entries));
  // The window only reads from the buffer; the span is non-const because
  // MoveBytes serves reads too.
  std::span<uint8_t> bytes(const_cast<uint8_t*>(data.data()), data.size());
  CAIRN_RETURN_IF_ERROR(MoveBytes(acc ? Move::kAccumulate : Move::kWrite, target, offset, bytes,
                                  entries, acc, nullptr));
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
    if (Valid(p.used[i])) {
      ++counts_.get_hit;
    } else {
      ++counts_.get_miss;
      all_valid = false;
    }
  }
  CAIRN_RETURN_IF_ERROR(MoveBytes(Move::kRead, target, offset, into, p.used, std::nullopt, &known));
  if (!all_valid) {
    p.fetched.resize(r.count);
    CAIRN_RETURN_IF_ERROR(window_->Get(target, layout_.entry_offset(r.first),
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

Status LogClient::ResolveVersion(int target, int64_t version, std::vector<uint64_t>* entries) {
  auto newer = [&](uint64_t e) { return e != kUnwrittenBlock && EntryVersion(e) > version; };
  for (;;) {
    bool stepped = false;
    for (uint64_t& e : *entries) {
      if (!newer(e)) continue;
      CAIRN_RETURN_IF_ERROR(window_->Get(target, layout_.link_offset(EntrySlot(e)),
                                         {reinterpret_cast<uint8_t*>(&e), 8}));
      stepped = true;
    }
    if (!stepped) return Status::Ok();
    CAIRN_RETURN_IF_ERROR(window_->Flush(target));
  }
}

Status LogClient::ReadFrozen(int target, int64_t version, uint64_t offset,
                             std::span<uint8_t> into) {
  const BlockRange r = Blocks(offset, into.size(), layout_.block_size);
  if (r.count == 0) return Status::Ok();
  std::vector<uint64_t> entries;
  CAIRN_RETURN_IF_ERROR(FetchEntries(target, r, &entries));
  CAIRN_RETURN_IF_ERROR(ResolveVersion(target, version, &entries));
  CAIRN_RETURN_IF_ERROR(MoveBytes(Move::kRead, target, offset, into, entries, std::nullopt, nullptr));
  return window_->Flush(target);
}

}  // namespace cairn
