// The transparent-mode runtime (runtime.h). Built without the stack
// protector: Restore changes the canary (SetStackGuard) in a frame that
// then leaves through setcontext, and no frame of this file may check it.
#include "transparent/runtime.h"

#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "api/transparent_internal.h"
#include "base/log.h"
#include "cairn/cairn.h"
#include "env/env.h"

namespace cairn {

namespace internal {
constinit std::atomic<Arena*> g_active_arena{nullptr};
constinit std::atomic<Arena*> g_reserved_arena{nullptr};
}  // namespace internal

namespace {

constexpr uint64_t kImageMagic = 0x31676d4969616e43;  // "CnaiImg1"
constexpr int kMaxDataRanges = 64;
constexpr size_t kPage = 4096;
// Bytes below the safe point's stack pointer captured too (the x86-64
// red zone, and the margin getcontext's own frame used).
constexpr size_t kBelowStackPointer = 1024;
// The fixed stack ends this far below the arena, so the two mappings stay apart.
constexpr uintptr_t kStackGap = 2 << 20;
// The tracked window of the heap grows in steps of this (uffd-wp arms every
// page of it, so it covers the heap, not the whole reservation).
constexpr size_t kTrackStep = size_t{64} << 20;
constexpr size_t kRestoreStackBytes = size_t{16} << 20;

// What a restart needs before it can read the rest: the shapes of the
// regions, the registers at the safe point, the canary, and two addresses
// that prove code and libraries sit where they did. Region 0 of
// <name>.image; docs/format.md "Transparent mode".
struct ImageControl {
  uint64_t magic = 0;
  int64_t version = -1;
  uint64_t arena_base = 0;
  uint64_t arena_capacity = 0;
  uint64_t heap_bytes = 0;
  MemoryRange stack;  // the captured part of main's stack
  uint64_t stack_guard = 0;
  uint64_t code_anchor = 0;  // this library's TheRuntime
  uint64_t mpi_anchor = 0;   // MPI_COMM_WORLD (in Open MPI, libmpi's data)
  uint32_t data_count = 0;
  MemoryRange data[kMaxDataRanges];
  ucontext_t context;
};

// The image of the checkpoint being written, or the one restored: in this
// library's data, so its context's pointers (fpregs) stay valid.
ImageControl g_image;
// Set by a restore right before it jumps into the restored context: tells
// TakeCheckpoint's second return from getcontext from its first.
volatile sig_atomic_t g_resumed = 0;

// The restore's own stack and its way back on failure.
ucontext_t g_init_context;
struct PendingRestore {
  int64_t version = -1;
  ImageControl* staged = nullptr;
  Status status;
} g_pending;

uintptr_t CodeAnchor() { return reinterpret_cast<uintptr_t>(&TheRuntime); }
uintptr_t MpiAnchor() { return reinterpret_cast<uintptr_t>(MPI_COMM_WORLD); }

Status CairnError(int rc, const std::string& what) {
  return Status(static_cast<Code>(rc), what + ": " + cairn_error_message(CAIRN_LAST_ERROR));
}

int ProtectRange(int id, const MemoryRange& r) {
  return cairn_protect(id, reinterpret_cast<void*>(r.begin), r.bytes(), 1);
}

// The regions of the data checkpoint, in id order from 1.
std::vector<MemoryRange> DataRegions(const ImageControl& image) {
  std::vector<MemoryRange> regions;
  regions.push_back({image.arena_base, image.arena_base + image.heap_bytes});
  regions.push_back(image.stack);
  for (uint32_t i = 0; i < image.data_count; ++i) regions.push_back(image.data[i]);
  return regions;
}

// Protects regions as ids 1.., runs write (a checkpoint or a restart),
// unprotects them again whatever it did.
int WithDataRegions(const std::vector<MemoryRange>& regions, int (*call)(const char*, int),
                    const char* name, int version) {
  int rc = CAIRN_SUCCESS;
  int protected_count = 0;
  for (const MemoryRange& r : regions) {
    rc = ProtectRange(1 + protected_count, r);
    if (rc != CAIRN_SUCCESS) break;
    ++protected_count;
  }
  if (rc == CAIRN_SUCCESS) rc = call(name, version);
  for (int id = 1; id <= protected_count; ++id) (void)cairn_unprotect(id);
  return rc;
}

// Region 0 alone, likewise.
int WithImageRegion(ImageControl* image, int (*call)(const char*, int), const char* name,
                    int version) {
  int rc = cairn_protect(0, image, sizeof(*image), 1);
  if (rc != CAIRN_SUCCESS) return rc;
  rc = call(name, version);
  (void)cairn_unprotect(0);
  return rc;
}

// kMismatch naming what differs when `image` cannot be restored into this
// process.
Status CheckImageFits(const ImageControl& image, const Arena& arena, const MemoryRange& stack) {
  if (image.magic != kImageMagic) return Error(Code::kCorrupt, "the image has no magic number");
  if (image.arena_base != arena.base() || image.arena_capacity != arena.capacity()) {
    return Error(Code::kMismatch,
                 "the checkpoint's heap was at {:#x} ({} bytes), this run's is at {:#x} ({} "
                 "bytes): set [transparent] arena_address and arena_size as in that run",
                 image.arena_base, image.arena_capacity, arena.base(), arena.capacity());
  }
  if (image.stack.begin < stack.begin || image.stack.end != stack.end) {
    return Error(Code::kMismatch,
                 "the checkpoint's stack {:#x}-{:#x} does not fit this run's {:#x}-{:#x}: set "
                 "[transparent] stack_size as in that run",
                 image.stack.begin, image.stack.end, stack.begin, stack.end);
  }
  if (image.code_anchor != CodeAnchor() || image.mpi_anchor != MpiAnchor()) {
    return Error(Code::kMismatch,
                 "code and libraries are not where they were in the checkpointed run "
                 "(address-space randomisation: keep [transparent] fixed_layout = true, and run "
                 "the same program with the same libraries)");
  }
  std::vector<MemoryRange> data = ProgramDataRanges();
  if (data.size() != image.data_count ||
      !std::equal(data.begin(), data.end(), image.data)) {
    return Error(Code::kMismatch,
                 "the program's data segment differs from the checkpointed run's (was the "
                 "program rebuilt?)");
  }
  return Status::Ok();
}

// Whether the configuration sets [dedup] mode: CAIRN_DEDUP_MODE, or the
// key in the file $CAIRN_CONFIG names (the one cairn_init reads here).
bool DedupModeGiven() {
  if (std::getenv("CAIRN_DEDUP_MODE") != nullptr) return true;
  const char* path = std::getenv("CAIRN_CONFIG");
  if (path == nullptr || *path == '\0') return false;
  auto text = PosixEnv()->ReadFileUpTo(path, kMaxConfigFileBytes);
  if (!text.ok()) return false;  // LoadConfig has said why
  try {
    toml::table table = toml::parse(*text, std::string_view(path));
    return table["dedup"]["mode"].is_value();
  } catch (const toml::parse_error&) {
    return false;  // LoadConfig has said why
  }
}

// A transparent version captures the whole heap, most of it unchanged
// since the previous version: unless [dedup] mode is set, the versions of
// this process use incremental dedup, so that only the pages the tracker
// saw written are hashed and stored (docs/transparent.md). Through the
// environment, which cairn_init reads and the re-executed program keeps.
void DefaultToIncrementalDedup() {
  if (!DedupModeGiven()) setenv("CAIRN_DEDUP_MODE", "incremental", 0);
}

// Runs on the restore stack: the fixed stack is about to be overwritten.
void RestoreOnOwnStack() {
  TransparentRuntime& rt = TheRuntime();
  g_pending.status = Status::Ok();
  // Only returns on failure (a restore jumps into the restored context).
  g_pending.status = rt.RestoreDataForPending();
  setcontext(&g_init_context);
}

}  // namespace

TransparentRuntime& TheRuntime() {
  static TransparentRuntime* runtime = new TransparentRuntime();  // lives until exit
  return *runtime;
}

Status TransparentRuntime::Start(char** argv, char** envp) {
  InsideCairnScope internal;
  DefaultToIncrementalDedup();
  auto config = LoadConfig(nullptr, ProcessEnvLookup(), ProcessEnvNames(),
                           [](const std::string& path, uint64_t max_bytes) {
                             return PosixEnv()->ReadFileUpTo(path, max_bytes);
                           });
  if (!config.ok()) return config.status();
  config_ = *config;
  SetLogLevel(LogLevelNamed(config_.log_level));
  const TransparentSettings& t = config_.transparent;
  if (t.fixed_layout) {
    // Not fatal: a restart checks the layout and refuses a wrong one.
    Status fixed = EnsureFixedLayout(argv, envp);
    if (!fixed.ok()) Log(LogLevel::kWarn, "transparent.fixed_layout: {}", fixed.ToString());
  }
  if (t.arena_address <= kStackGap + t.stack_size + kPage) {
    return Error(Code::kConfig, "transparent.arena_address {:#x} leaves no room for the stack "
                                "below it",
                 t.arena_address);
  }
  auto stack = ReserveFixedStack(t.arena_address - kStackGap, t.stack_size);
  if (!stack.ok()) return stack.status();
  auto base = Arena::Reserve(t.arena_address, t.arena_size);
  if (!base.ok()) {
    munmap(reinterpret_cast<void*>(stack->begin - kPage), stack->bytes() + kPage);
    return base.status();
  }
  stack_ = *stack;
  arena_ = std::make_unique<Arena>(*base, t.arena_size);
  arena_->Format();
  internal::g_reserved_arena.store(arena_.get(), std::memory_order_release);
  started_ = true;
  return Status::Ok();
}

Status TransparentRuntime::AfterMpiInit() {
  if (!started_) return Status::Ok();
  InsideCairnScope internal;
  int rc = cairn_init(MPI_COMM_WORLD, nullptr);
  if (rc != CAIRN_SUCCESS) return CairnError(rc, "cairn_init in MPI_Init");
  cairn_ready_ = true;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  SetLogRank(rank);
  int newest = cairn_restart_test(ImageName().c_str(), -1);
  if (newest < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return CairnError(cairn_last_error(), "looking for a transparent checkpoint");
  }
  if (newest >= 0) return Restore(newest);  // returns only on failure
  CAIRN_RETURN_IF_ERROR(TrackWindow(arena_->used()));
  unsaved_known_ = true;
  internal::g_active_arena.store(arena_.get(), std::memory_order_release);
  Log(LogLevel::kInfo, "transparent mode: heap at {:#x}, tracking {}", arena_->base(),
      DirtyMethodName(tracker_->method()));
  return Status::Ok();
}

Status TransparentRuntime::BeforeMpiFinalize() {
  if (!cairn_ready_) return Status::Ok();
  InsideCairnScope internal;
  WarnOfUnservedRequest();
  cairn_ready_ = false;
  int rc = cairn_finalize();
  if (rc != CAIRN_SUCCESS) return CairnError(rc, "cairn_finalize in MPI_Finalize");
  return Status::Ok();
}

void TransparentRuntime::WarnOfUnservedRequest() const {
  // Collective like MPI_Finalize, which every rank is in.
  if (ActiveArena() == nullptr || cairn_checkpoint_requested() != 1) return;
  Log(LogLevel::kWarn,
      "transparent mode: a checkpoint was requested by signal but no safe point came: the "
      "program called no MPI_Barrier or MPI_Allreduce on MPI_COMM_WORLD since. If its ranks call "
      "MPI_Wait* equally often, set [transparent] wait_safe_points = true (docs/transparent.md)");
}

Status TransparentRuntime::SafePoint(const char* where) {
  if (!cairn_ready_ || ActiveArena() == nullptr) return Status::Ok();
  InsideCairnScope internal;
  int requested = cairn_checkpoint_requested();
  if (requested < 0) return CairnError(requested, "safe point");
  if (requested == 0) return Status::Ok();
  safe_point_ = where;
  return TakeCheckpoint();
}

// getcontext returns twice: now, and after a restore in a later run. What
// the second return needs is in callee-saved registers (restored by
// setcontext) or in this frame as it was when the checkpoint copied it.
__attribute__((noinline)) Status TransparentRuntime::TakeCheckpoint() {
  g_resumed = 0;
  getcontext(&g_image.context);
  if (g_resumed) {
    g_resumed = 0;
    Log(LogLevel::kInfo, "transparent mode: resumed version {}", g_image.version);
    return Status::Ok();
  }
  int64_t version = next_version_;
  size_t heap_bytes = arena_->Freeze();  // other threads' allocations wait
  g_image.magic = kImageMagic;
  g_image.version = version;
  g_image.arena_base = arena_->base();
  g_image.arena_capacity = arena_->capacity();
  g_image.heap_bytes = heap_bytes;
  uintptr_t sp = StackPointerOf(g_image.context);
  g_image.stack = {(sp - kBelowStackPointer) & ~uintptr_t{63}, stack_.end};
  g_image.stack_guard = StackGuard();
  g_image.code_anchor = CodeAnchor();
  g_image.mpi_anchor = MpiAnchor();
  std::vector<MemoryRange> data = ProgramDataRanges();
  Status s = data.size() <= kMaxDataRanges
                 ? Status::Ok()
                 : Error(Code::kUnsupported, "the program's data has {} pieces, at most {} are "
                                             "supported",
                         data.size(), kMaxDataRanges);
  if (s.ok()) {
    g_image.data_count = static_cast<uint32_t>(data.size());
    std::copy(data.begin(), data.end(), g_image.data);
    NoteWrittenPages(heap_bytes);
    s = WriteImage(version);
  }
  arena_->Thaw();
  if (s.ok()) ++next_version_;
  return s;
}

Status TransparentRuntime::WriteImage(int64_t version) {
  const int v = static_cast<int>(version);
  // The image first: a version whose data is missing is passed over by a
  // restart, which then reads the version before.
  int rc = WithImageRegion(&g_image, &cairn_checkpoint, ImageName().c_str(), v);
  if (rc != CAIRN_SUCCESS) return CairnError(rc, "checkpointing the process image");
  // The note goes with the data checkpoint (cairn_last_checkpoint reports it).
  cairn_internal_note_tracking(written_note_.method, written_note_.pages_written,
                               written_note_.pages_total);
  NoteChangedPagesForEngine();
  rc = WithDataRegions(DataRegions(g_image), &cairn_checkpoint, DataName().c_str(), v);
  if (rc != CAIRN_SUCCESS) return CairnError(rc, "checkpointing the heap, stack and data");
  AfterDataCheckpoint(version);
  return Status::Ok();
}

Status TransparentRuntime::Restore(int64_t version) {
  auto staged = std::make_unique<ImageControl>();
  int rc = WithImageRegion(staged.get(), &cairn_restart, ImageName().c_str(),
                           static_cast<int>(version));
  if (rc < 0) return CairnError(rc, "restoring the process image");
  CAIRN_RETURN_IF_ERROR(CheckImageFits(*staged, *arena_, stack_).Annotate(
      fmt::format("restoring {} version {}", ImageName(), rc)));
  // The restore overwrites the fixed stack this call runs on: it runs on a
  // stack of its own, and comes back here only if it fails.
  void* restore_stack = mmap(nullptr, kRestoreStackBytes, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (restore_stack == MAP_FAILED) {
    return Error(Code::kNoSpace, "no memory for the restore's stack: {}", std::strerror(errno));
  }
  g_pending = {rc, staged.get(), Status::Ok()};
  ucontext_t restore_context;
  getcontext(&restore_context);
  restore_context.uc_stack.ss_sp = restore_stack;
  restore_context.uc_stack.ss_size = kRestoreStackBytes;
  restore_context.uc_link = nullptr;
  makecontext(&restore_context, &RestoreOnOwnStack, 0);
  swapcontext(&g_init_context, &restore_context);
  munmap(restore_stack, kRestoreStackBytes);
  return g_pending.status;
}

Status TransparentRuntime::RestoreDataForPending() {
  ImageControl* staged = g_pending.staged;
  const int v = static_cast<int>(g_pending.version);
  int rc = WithDataRegions(DataRegions(*staged), &cairn_restart, DataName().c_str(), v);
  if (rc < 0) return CairnError(rc, fmt::format("restoring the heap, stack and data of {}", DataName()));
  if (rc != v) {
    return Error(Code::kCorrupt,
                 "version {} of {} could not be restored (version {} was instead, whose "
                 "process image does not go with it); the heap, stack and data now hold "
                 "version {}",
                 v, DataName(), rc, rc);
  }
  CAIRN_RETURN_IF_ERROR(arena_->Check());
  g_image = *staged;
  g_image.context.uc_mcontext.fpregs = &g_image.context.__fpregs_mem;
  next_version_ = v + 1;
  CAIRN_RETURN_IF_ERROR(TrackWindow(g_image.heap_bytes));
  DirtyPageSet restored_pages;  // the restore's own writes are no program writes
  unsaved_known_ = tracker_->Collect(&restored_pages).ok();
  unsaved_pages_.runs.clear();
  saved_version_ = v;
  internal::g_active_arena.store(arena_.get(), std::memory_order_release);
  Log(LogLevel::kInfo, "transparent mode: restored version {} ({} heap bytes), tracking {}", v,
      g_image.heap_bytes, DirtyMethodName(tracker_->method()));
  SetStackGuard(g_image.stack_guard);
  g_resumed = 1;
  setcontext(&g_image.context);
  return Error(Code::kInternal, "setcontext into the restored process image failed");
}

void TransparentRuntime::NoteWrittenPages(size_t heap_bytes) {
  const uint64_t heap_pages = (heap_bytes + kPage - 1) / kPage;
  const char* method = tracker_ ? DirtyMethodName(tracker_->method()) : "none";
  DirtyPageSet collected;
  Status s = tracker_ ? tracker_->Collect(&collected)
                      : Error(Code::kUnsupported, "no tracker");
  DirtyPageSet mpi_writes;
  {
    MutexLock lock(&mpi_writes_mu_);
    std::swap(mpi_writes, mpi_writes_);
  }
  if (s.ok()) {
    collected.Merge(mpi_writes);
    const uint64_t tracked_pages = tracked_bytes_ / kPage;
    if (heap_pages > tracked_pages) {
      DirtyPageSet beyond;  // grown past the window: not tracked, so written
      beyond.runs.push_back({tracked_pages, heap_pages - tracked_pages});
      collected.Merge(beyond);
    }
    unsaved_pages_.Merge(collected);
  } else {
    Log(LogLevel::kWarn, "transparent mode: dirty-page tracking failed, hashing every page: {}",
        s.ToString());
    unsaved_known_ = false;
    tracker_.reset();  // a tracker that failed half-way may have missed writes: start afresh
    tracked_bytes_ = 0;
  }
  uint64_t written = heap_pages;
  if (unsaved_known_) {
    written = 0;
    for (const auto& run : unsaved_pages_.runs) {
      if (run.first >= heap_pages) break;
      written += std::min(run.count, heap_pages - run.first);
    }
  }
  written_note_ = {method, written, heap_pages};
  Log(LogLevel::kInfo, "transparent mode: {} of {} heap pages written since version {} ({})",
      written, heap_pages, saved_version_, method);
  Status widened = TrackWindow(heap_bytes);
  if (!widened.ok()) Log(LogLevel::kWarn, "transparent mode: {}", widened.ToString());
}

void TransparentRuntime::NoteMpiWrite(const void* begin, size_t bytes) {
  if (!arena_ || bytes == 0) return;
  const uintptr_t base = arena_->base();
  const uintptr_t limit = base + arena_->capacity();
  uintptr_t first = reinterpret_cast<uintptr_t>(begin);
  uintptr_t end = first + bytes < first ? limit : first + bytes;  // no wrap-around
  first = std::max(first, base);
  end = std::min(end, limit);
  if (first >= end) return;
  DirtyPageSet pages;
  const uint64_t first_page = (first - base) / kPage;
  pages.runs.push_back({first_page, (end - 1 - base) / kPage - first_page + 1});
  MutexLock lock(&mpi_writes_mu_);
  mpi_writes_.Merge(pages);
}

void TransparentRuntime::NoteChangedPagesForEngine() const {
  if (!unsaved_known_ || saved_version_ < 0) return;
  std::vector<unsigned long long> runs;
  runs.reserve(2 * unsaved_pages_.runs.size());
  for (const auto& run : unsaved_pages_.runs) {
    runs.push_back(run.first);
    runs.push_back(run.count);
  }
  // Region 1 is the heap (DataRegions). A note that fails only costs
  // hashing every page.
  int rc = cairn_internal_note_changed_pages(1, saved_version_,
                                             reinterpret_cast<const void*>(arena_->base()), kPage,
                                             runs.data(), runs.size() / 2);
  if (rc != CAIRN_SUCCESS) {
    Log(LogLevel::kWarn, "transparent mode: {}", cairn_error_message(CAIRN_LAST_ERROR));
  }
}

void TransparentRuntime::AfterDataCheckpoint(int64_t version) {
  cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
  if (cairn_last_checkpoint(&info) != CAIRN_SUCCESS || info.version != version || info.skipped) {
    return;  // nothing new was stored: the pages stay unsaved
  }
  const bool paged = info.pages_unique + info.pages_local_dup + info.pages_remote_ref +
                         info.pages_unchanged > 0;  // [dedup] on
  Log(LogLevel::kInfo,
      "transparent mode: version {} in {} ({} heap bytes, {} stack bytes): {} bytes written{}",
      version, safe_point_, g_image.heap_bytes, g_image.stack.bytes(), info.bytes,
      paged ? fmt::format(", {} pages hashed in {:.6f} s, {} stored, {} unchanged",
                          info.pages_hashed, info.dedup_hash_seconds, info.pages_unique,
                          info.pages_unchanged)
            : std::string(" (dedup off: every page)"));
  saved_version_ = version;
  unsaved_pages_.runs.clear();
  unsaved_known_ = tracker_ != nullptr;
}

Status TransparentRuntime::TrackWindow(size_t heap_bytes) {
  size_t want = std::max(kTrackStep, (2 * heap_bytes + kTrackStep - 1) / kTrackStep * kTrackStep);
  want = std::min(want, arena_->capacity());
  if (tracker_ && want <= tracked_bytes_) return Status::Ok();
  tracker_.reset();  // one mprotect tracker per process: the old one goes first
  auto tracker = DirtyTracker::Create(config_.transparent.tracking,
                                      reinterpret_cast<void*>(arena_->base()), want);
  if (!tracker.ok()) return tracker.status().Annotate("transparent.tracking");
  tracker_ = std::move(tracker).value();
  tracked_bytes_ = want;
  return Status::Ok();
}

}  // namespace cairn
