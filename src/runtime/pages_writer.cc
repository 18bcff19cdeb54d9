#include "runtime/pages_writer.h"

#include <algorithm>
#include <utility>

#include "runtime/part_io.h"

namespace cairn {

PagesFileWriter::PagesFileWriter(Tier* tier, std::string name, int64_t version, std::string file,
                                 uint64_t create_bytes)
    : tier_(tier), name_(std::move(name)), version_(version), file_(std::move(file)),
      create_bytes_(create_bytes) {}

Status PagesFileWriter::Open() {
  if (pending_) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(pending_, tier_->Create(name_, version_, file_, create_bytes_));
  const std::string preamble = EncodePagesPreamble();
  data_sum_.Update(preamble.data(), preamble.size());
  written_ = preamble.size();
  return pending_->file().Append(preamble.data(), preamble.size());
}

Status PagesFileWriter::AppendRun(const uint8_t* data, uint64_t n) {
  if (n == 0) return Status::Ok();
  written_ += n;
  return AppendChecksummed(pending_->file(), data_sum_, data, n);
}

bool PagesFileWriter::CopyAhead(const PageView& view, size_t first, size_t last,
                                const PageHasher* hasher, PageDigest* digests) {
  KeepAhead(nullptr);
  if (first >= last || !status_.ok()) return false;
  status_ = Open();
  if (!status_.ok()) return false;
  Ahead ahead{first, last, 0, data_sum_.mark()};
  for (size_t i = first; i < last; ++i) ahead.bytes += view.page(i).length;
  uint8_t* to = pending_->file().Peek(ahead.bytes);
  if (to == nullptr) return false;
  std::vector<bool> hashed(last - first, false);
  // Runs of whole pages that follow each other in memory (the regions'
  // pages need not), each in one pass; a short page on its own.
  for (size_t i = first; i < last;) {
    const uint8_t* src = view.page(i).data;
    uint64_t bytes = view.page(i).length;
    size_t j = i + 1;
    while (view.whole(i) && j < last && view.whole(j) && view.page(j).data == src + bytes) {
      bytes += view.page(j++).length;
    }
    if (hasher != nullptr && view.whole(i)) {
      CopyAndHashRun(to, src, bytes, view.page_size(), *hasher, digests + (i - first),
                     hashed.begin() + static_cast<ptrdiff_t>(i - first));
    } else {
      data_sum_.CopyAndUpdate(to, src, bytes, CopyStores::kStreaming);
    }
    to += bytes;
    i = j;
  }
  // Pages the copy could not hash (short ones, ones split by a CRC
  // block's end): from cache, just read by the copy.
  for (size_t i = first; hasher != nullptr && i < last; ++i) {
    if (!hashed[i - first]) digests[i - first] = hasher->Hash(view.page(i).data, view.page(i).length);
  }
  ahead_ = ahead;
  return true;
}

void PagesFileWriter::CopyAndHashRun(uint8_t* to, const uint8_t* src, uint64_t bytes,
                                     size_t page, const PageHasher& hasher, PageDigest* digests,
                                     std::vector<bool>::iterator hashed) {
  data_sum_.AddPieces(bytes, [&](size_t at, size_t take, uint32_t crc) {
    // The whole pages inside this piece are hashed as they are copied.
    const size_t pages_from = (at + page - 1) / page;
    const size_t pages_to = (at + take) / page;
    if (pages_from >= pages_to) return CopyWithCrc32c(to + at, src + at, take, crc, CopyStores::kStreaming);
    const size_t from = pages_from * page, end = pages_to * page;
    crc = CopyWithCrc32c(to + at, src + at, from - at, crc, CopyStores::kStreaming);
    crc = hasher.CopyAndHash(to + from, src + from, end - from, page, crc, CopyStores::kStreaming,
                             digests + pages_from);
    std::fill(hashed + static_cast<ptrdiff_t>(pages_from), hashed + static_cast<ptrdiff_t>(pages_to), true);
    return CopyWithCrc32c(to + end, src + end, at + take - end, crc, CopyStores::kStreaming);
  });
}

bool PagesFileWriter::KeepAhead(const std::vector<size_t>* pages) {
  if (!ahead_) return false;
  const Ahead ahead = *ahead_;
  ahead_.reset();
  const bool same = pages != nullptr && pages->size() == ahead.last - ahead.first &&
                    pages->front() == ahead.first && pages->back() + 1 == ahead.last;
  if (same && pending_->file().Claim(ahead.bytes) != nullptr) {
    written_ += ahead.bytes;
    return true;
  }
  data_sum_.RewindTo(ahead.mark);
  return false;
}

void PagesFileWriter::Store(const PageView& view, const std::vector<size_t>& pages) {
  if (KeepAhead(&pages) || !status_.ok()) return;
  status_ = Open();
  const uint8_t* run = nullptr;
  uint64_t run_bytes = 0;
  for (size_t i : pages) {
    if (!status_.ok()) return;
    const PageSpan& p = view.page(i);
    if (run_bytes > 0 && run + run_bytes != p.data) {
      status_ = AppendRun(run, run_bytes);
      run_bytes = 0;
    }
    if (run_bytes == 0) run = p.data;
    run_bytes += p.length;
  }
  if (status_.ok()) status_ = AppendRun(run, run_bytes);
}

Result<FileEntry> PagesFileWriter::Finish(const PagesHeader& header) {
  KeepAhead(nullptr);
  if (status_.ok()) status_ = Open();
  CAIRN_RETURN_IF_ERROR(status_);
  if (header.format != kPagesFormatVersion || header.HeaderOffset() != written_) {
    return Error(Code::kInternal, "pages file '{}': {} bytes written, the header says {}", file_,
                 written_, header.HeaderOffset());
  }
  // The header goes straight into a mapped file; through Append otherwise.
  const uint64_t header_bytes = header.HeaderBytes();
  ExtentChecksummer tail_sum(written_);
  WritableFile& file = pending_->file();
  if (uint8_t* to = file.Peek(header_bytes)) {
    header.EncodeTo(to);
    tail_sum.Update(to, header_bytes);
    if (file.Claim(header_bytes) == nullptr) {
      return Error(Code::kInternal, "pages file '{}': the header's {} bytes were peeked at but "
                   "could not be claimed", file_, header_bytes);
    }
  } else {
    const std::string encoded = header.Encode();
    tail_sum.Update(encoded.data(), encoded.size());
    CAIRN_RETURN_IF_ERROR(file.Append(encoded.data(), encoded.size()));
  }
  const std::string trailer = EncodePagesTrailer(written_);
  tail_sum.Update(trailer.data(), trailer.size());
  CAIRN_RETURN_IF_ERROR(file.Append(trailer.data(), trailer.size()));
  FileEntry entry;
  entry.kind = FileKind::kPart;
  entry.name = file_;
  entry.size = written_ + header_bytes + trailer.size();
  entry.extents = {data_sum_.Finish(), tail_sum.Finish()};
  CAIRN_RETURN_IF_ERROR(pending_->Commit());
  pending_.reset();
  return entry;
}

}  // namespace cairn
