// The transparent-mode runtime of libcairn_intercept.so
// (docs/transparent.md): owns the arena, main's fixed stack and the dirty
// tracker; takes a checkpoint of the process image at a safe point and
// restores it in MPI_Init. Cairn itself is reached through the public C API
// of libcairn.so (checkpoints are written by its engine like any other).
// Checkpoints: two names per version v, written in this order:
//   <name>.image  region 0: the ImageControl (shapes, registers, canary)
//   <name>        region 1 the heap, 2 main's stack, 3.. the program's data
// so a restart reads the image first and learns the shapes of the rest.
// Thread-safety: Start runs before main; the rest on the thread that
// called MPI_Init. There is one runtime per process (TheRuntime): the
// preloaded entry points (malloc, MPI_*) have no handle to carry it.
#ifndef CAIRN_TRANSPARENT_RUNTIME_H_
#define CAIRN_TRANSPARENT_RUNTIME_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "api/transparent_internal.h"
#include "base/config.h"
#include "base/mutex.h"
#include "base/status.h"
#include "transparent/arena.h"
#include "transparent/dirty_tracker.h"
#include "transparent/process_image.h"

namespace cairn {

class TransparentRuntime {
 public:
  // Before main: loads the configuration; with transparent.fixed_layout,
  // re-executes the program (argv, envp) once without address
  // randomisation (EnsureFixedLayout: this call then does not return);
  // reserves the arena and the fixed stack. An error leaves the process
  // running without transparent mode (main on its own stack, the system
  // allocator), after saying why.
  Status Start(char** argv, char** envp);
  bool started() const { return started_; }
  const MemoryRange& stack() const { return stack_; }

  // In MPI_Init, after the real one: cairn_init over MPI_COMM_WORLD, then,
  // when a checkpoint exists, the restore. A successful restore does not
  // return: the process resumes at the checkpoint's safe point.
  Status AfterMpiInit();
  // At a safe point of the main thread: when the signal reached any rank
  // (collective over MPI_COMM_WORLD), checkpoints the process image. After
  // a restore, execution resumes inside this call, which then returns.
  // `where`: the wrapped call, for the log.
  Status SafePoint(const char* where);
  // Whether MPI_Wait* are safe points ([transparent] wait_safe_points).
  bool wait_safe_points() const { return config_.transparent.wait_safe_points; }
  // In MPI_Finalize, before the real one: cairn_finalize.
  Status BeforeMpiFinalize();

  // The heap: ActiveArena() and ArenaOwning() below are how the allocator
  // entry points reach it.
  Arena* arena() const { return arena_.get(); }

  // Bytes [begin, begin + bytes) of the heap may be written by MPI where
  // the tracker does not see it (RDMA into a registered buffer, a peer's
  // single-copy mapping): a receive buffer, noted when the receive is
  // posted. Its pages count as written in the next version. Bytes outside
  // the heap are ignored. Any thread; REQUIRES: inside an InsideCairnScope
  // (it allocates).
  void NoteMpiWrite(const void* begin, size_t bytes);

  // The second half of a restore, on a stack of its own (runtime.cc):
  // only returns when it fails.
  Status RestoreDataForPending();

 private:
  Status TakeCheckpoint();
  // At MPI_Finalize: says so when a signal's request was never served (the
  // program reached no safe point after it).
  void WarnOfUnservedRequest() const;
  Status WriteImage(int64_t version);
  // Reads the image of `version`, checks that it fits this process, then
  // restores the rest; only returns when it fails.
  Status Restore(int64_t version);
  // Collects the heap pages written since the last collection into
  // unsaved_pages_ (all pages of the heap beyond the tracked window count
  // as written), notes them for the data checkpoint's report
  // (cairn_last_checkpoint); re-arms and, when the heap outgrew it, widens
  // the tracked window. A tracker that fails is replaced and the pages
  // count as unknown (every page is hashed).
  void NoteWrittenPages(size_t heap_bytes);
  // Hands unsaved_pages_ to the engine for the data checkpoint of
  // `version` (cairn_internal_note_changed_pages), when they are known and
  // relative to a committed version: its incremental dedup then hashes and
  // writes only those heap pages.
  void NoteChangedPagesForEngine() const;
  // After the data checkpoint of `version` returned: a committed version
  // becomes what the next one's changed pages are relative to.
  void AfterDataCheckpoint(int64_t version);
  Status TrackWindow(size_t heap_bytes);
  std::string ImageName() const { return config_.transparent.name + ".image"; }
  const std::string& DataName() const { return config_.transparent.name; }

  Config config_;
  bool started_ = false;
  bool cairn_ready_ = false;
  std::unique_ptr<Arena> arena_;
  MemoryRange stack_;
  std::unique_ptr<DirtyTracker> tracker_;
  size_t tracked_bytes_ = 0;  // the tracked window: [base, base + tracked_bytes_)
  // Heap pages written since the data checkpoint of saved_version_ (the
  // last committed one; a skipped or failed version leaves them here);
  // unknown after a tracker failure until the next committed version.
  DirtyPageSet unsaved_pages_;
  bool unsaved_known_ = false;
  // Receive buffers noted since the last collection (NoteMpiWrite).
  Mutex mpi_writes_mu_;
  DirtyPageSet mpi_writes_ GUARDED_BY(mpi_writes_mu_);
  int64_t saved_version_ = -1;
  // What NoteWrittenPages found, for the data checkpoint's report.
  struct WrittenNote {
    const char* method = "none";
    uint64_t pages_written = 0;
    uint64_t pages_total = 0;
  } written_note_;
  int64_t next_version_ = 0;
  const char* safe_point_ = "";  // the call of the checkpoint being taken
};

TransparentRuntime& TheRuntime();

// For the allocator entry points, which run before any constructor (the
// runtime's own construction allocates): plain constant-initialized
// pointers, never a call into TheRuntime().
namespace internal {
extern constinit std::atomic<Arena*> g_active_arena;  // set once AfterMpiInit is done
extern constinit std::atomic<Arena*> g_reserved_arena;  // set once Start reserved it
}  // namespace internal
// The arena new allocations go to (null: the system allocator's turn, before
// MPI_Init has finished).
inline Arena* ActiveArena() { return internal::g_active_arena.load(std::memory_order_acquire); }
// The arena that owns p, or null.
inline Arena* ArenaOwning(const void* p) {
  Arena* arena = internal::g_reserved_arena.load(std::memory_order_acquire);
  return p != nullptr && arena != nullptr && arena->Owns(p) ? arena : nullptr;
}

// A thread's allocations bypass the arena while it is inside Cairn
// (cairn_internal_in_call): in libcairn's entry points, in the wrapped MPI
// calls (their buffers belong to this run's libraries, not to the
// program; InsideCairnScope), and for good in the threads either starts.

}  // namespace cairn

#endif  // CAIRN_TRANSPARENT_RUNTIME_H_
