#include "runtime/pages_writer.h"

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

bool PagesFileWriter::CopyAhead(const PageView& view, size_t first, size_t last) {
  KeepAhead(nullptr);
  if (first >= last || !status_.ok()) return false;
  status_ = Open();
  if (!status_.ok()) return false;
  Ahead ahead{first, last, 0, data_sum_.mark()};
  for (size_t i = first; i < last; ++i) ahead.bytes += view.page(i).length;
  uint8_t* to = pending_->file().Peek(ahead.bytes);
  if (to == nullptr) return false;
  // Page by page: the regions' pages need not follow each other in memory.
  for (size_t i = first; i < last; ++i) {
    const PageSpan& p = view.page(i);
    data_sum_.CopyAndUpdate(to, p.data, p.length, CopyStores::kStreaming);
    to += p.length;
  }
  ahead_ = ahead;
  return true;
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
  std::string tail = header.Encode() + EncodePagesTrailer(written_);
  ExtentChecksummer tail_sum(written_);
  tail_sum.Update(tail.data(), tail.size());
  CAIRN_RETURN_IF_ERROR(pending_->file().Append(tail.data(), tail.size()));
  FileEntry entry;
  entry.kind = FileKind::kPart;
  entry.name = file_;
  entry.size = written_ + tail.size();
  entry.extents = {data_sum_.Finish(), tail_sum.Finish()};
  CAIRN_RETURN_IF_ERROR(pending_->Commit());
  pending_.reset();
  return entry;
}

uint64_t PagesFileBound(PagesHeader header) {
  header.format = kPagesFormatVersion;
  const size_t pages = header.PageLengths().size();
  header.pages.assign(pages, PageRecord{});  // every page stored
  const uint64_t data = header.DataBytes();
  PageRecord reference;
  reference.kind = PageKind::kRemote;  // the longest record
  header.pages.assign(pages, reference);
  return header.DataOffset() + data + header.HeaderBytes() + kPagesTrailerBytes;
}

}  // namespace cairn
