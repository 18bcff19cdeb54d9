// libcairn_intercept.so's entry points (docs/transparent.md): the
// allocator functions, pthread_create, __libc_start_main and the MPI calls
// it wraps through the PMPI profiling interface. Each is a thin door into
// TheRuntime() and its arena.
//
// Which allocations the arena gets: every allocation of the program's
// threads from the end of MPI_Init on. Allocations before that (the C
// runtime, the loader, the program before MPI_Init) and those made inside
// Cairn, inside the wrapped MPI calls and by the threads either starts go
// to the system allocator: they belong to this run's libraries, and a
// restore, which rewrites the arena, must not rewrite them. free, realloc
// and malloc_usable_size find a block's owner by its address.
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/log.h"
#include "transparent/runtime.h"

// glibc's own allocator under its internal names.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void __libc_free(void* ptr);
void* __libc_memalign(size_t align, size_t size);
}

namespace cairn {
namespace {

constexpr size_t kPage = 4096;

// The arena for this thread's allocations, or null for the system's.
Arena* ArenaForThisThread() {
  if (cairn_internal_in_call != 0) return nullptr;
  return ActiveArena();
}

Arena* Owner(const void* p) { return ArenaOwning(p); }

size_t SystemUsableSize(void* p) {
  // dlsym may allocate: from the system allocator, since no arena call
  // reaches here.
  using Fn = size_t (*)(void*);
  static Fn system = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
  return system != nullptr ? system(p) : 0;
}

void* ArenaResult(void* p) {
  if (p == nullptr) errno = ENOMEM;
  return p;
}

void* Memalign(size_t align, size_t size) {
  if (Arena* arena = ArenaForThisThread()) return ArenaResult(arena->AllocateAligned(align, size));
  return __libc_memalign(align, size);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Threads started from inside Cairn or MPI are theirs: they allocate
// from the system too.
struct InternalStart {
  void* (*routine)(void*);
  void* arg;
};

void* RunInternalThread(void* raw) {
  InternalStart start = *static_cast<InternalStart*>(raw);
  __libc_free(raw);
  cairn_internal_in_call = 1;
  return start.routine(start.arg);
}

// A safe point's failure cannot be returned through the MPI call: it is
// said on stderr, and the program goes on (its last checkpoint stands).
void SafePointFrom(const char* call) {
  Status s = TheRuntime().SafePoint(call);
  if (!s.ok()) Log(LogLevel::kError, "transparent mode: checkpoint in {} failed: {}", call, s.ToString());
}

// After a wait has completed this rank's requests (none of its messages
// is in flight then): a safe point when [transparent] wait_safe_points.
void SafePointAfterWait(const char* call) {
  if (TheRuntime().wait_safe_points()) SafePointFrom(call);
}

// The ranks a collective on comm gathers from (the remote group's, for an
// intercommunicator).
int Peers(MPI_Comm comm) {
  int inter = 0;
  int n = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if (inter) {
    PMPI_Comm_remote_size(comm, &n);
  } else {
    PMPI_Comm_size(comm, &n);
  }
  return n;
}

// A receive buffer of `count` elements of `type` at buf: MPI may write it
// where the dirty-page tracker does not see it (a NIC's RDMA into a
// registered buffer, a peer process's single-copy mapping), so its heap
// pages are noted as written. Called when the receive is posted (after a
// safe point of the same call: the write comes after that checkpoint),
// inside an InsideCairnScope.
// `first`: the first element's index (for displacements).
void NoteReceive(const void* buf, long long count, MPI_Datatype type, long long first_element = 0) {
  if (buf == nullptr || buf == MPI_IN_PLACE || count <= 0 || ArenaOwning(buf) == nullptr) return;
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    return;
  }
  // From the first element's true lower bound to the last one's true
  // upper bound (an extent may be negative).
  const MPI_Aint start = static_cast<MPI_Aint>(first_element) * extent;
  const MPI_Aint stride = static_cast<MPI_Aint>(count - 1) * extent;
  const MPI_Aint first = start + true_lb + std::min<MPI_Aint>(0, stride);
  const MPI_Aint end = start + true_lb + true_extent + std::max<MPI_Aint>(0, stride);
  TheRuntime().NoteMpiWrite(static_cast<const uint8_t*>(buf) + first,
                            static_cast<size_t>(end - first));
}

// A receive buffer of blocks counts[i] elements at displs[i], i < n (the
// v-collectives): the span from the lowest block to the highest.
void NoteDisplacedReceive(const void* buf, const int counts[], const int displs[], int n,
                          MPI_Datatype type) {
  if (counts == nullptr || displs == nullptr) return;
  long long low = 0;
  long long high = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    if (counts[i] <= 0) continue;
    low = any ? std::min<long long>(low, displs[i]) : displs[i];
    high = any ? std::max<long long>(high, static_cast<long long>(displs[i]) + counts[i])
               : static_cast<long long>(displs[i]) + counts[i];
    any = true;
  }
  if (any) NoteReceive(buf, high - low, type, low);
}

// Whether this rank receives at `root` of a rooted collective on comm.
bool IsRoot(int root, MPI_Comm comm) {
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return false;
  if (inter) return root == MPI_ROOT;
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  return rank == root;
}

// A restart that cannot resume (or Cairn that cannot start) is MPI_Init's
// error: said on stderr, then handed to MPI_COMM_WORLD's error handler as
// MPI does with its own errors, which by default ends the job. Going on
// would run the program from its start over the checkpointed state.
int AfterInit(int rc) {
  if (rc != MPI_SUCCESS) return rc;
  Status s = TheRuntime().AfterMpiInit();
  if (s.ok()) return rc;
  Log(LogLevel::kError, "transparent mode: {}", s.ToString());
  PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

}  // namespace
}  // namespace cairn

using cairn::Arena;
using cairn::InsideCairnScope;
using cairn::TheRuntime;

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t size) {
  if (Arena* arena = cairn::ArenaForThisThread()) return cairn::ArenaResult(arena->Allocate(size));
  return __libc_malloc(size);
}

__attribute__((visibility("default"))) void free(void* ptr) {
  if (Arena* arena = cairn::Owner(ptr)) {
    arena->Free(ptr);
  } else {
    __libc_free(ptr);
  }
}

__attribute__((visibility("default"))) void* calloc(size_t count, size_t size) {
  Arena* arena = cairn::ArenaForThisThread();
  if (arena == nullptr) return __libc_calloc(count, size);
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = arena->Allocate(bytes);
  if (p != nullptr) std::memset(p, 0, bytes);
  return cairn::ArenaResult(p);
}

__attribute__((visibility("default"))) void* realloc(void* ptr, size_t size) {
  if (ptr == nullptr) return malloc(size);
  if (size == 0) {
    free(ptr);
    return nullptr;
  }
  Arena* owner = cairn::Owner(ptr);
  Arena* target = cairn::ArenaForThisThread();
  if (owner == nullptr && target == nullptr) return __libc_realloc(ptr, size);
  size_t old_size = owner != nullptr ? owner->UsableSize(ptr) : cairn::SystemUsableSize(ptr);
  if (owner != nullptr && old_size >= size) return ptr;
  // Moves between the arena and the system heap, or grows in the arena.
  void* moved = malloc(size);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, ptr, old_size < size ? old_size : size);
  free(ptr);
  return moved;
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t align, size_t size) {
  if (!cairn::IsPowerOfTwo(align) || align % sizeof(void*) != 0) return EINVAL;
  void* p = cairn::Memalign(align, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t align, size_t size) {
  if (!cairn::IsPowerOfTwo(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return cairn::Memalign(align, size);
}

__attribute__((visibility("default"))) void* memalign(size_t align, size_t size) {
  if (!cairn::IsPowerOfTwo(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return cairn::Memalign(align, size);
}

__attribute__((visibility("default"))) void* valloc(size_t size) {
  return cairn::Memalign(cairn::kPage, size);
}

__attribute__((visibility("default"))) void* pvalloc(size_t size) {
  return cairn::Memalign(cairn::kPage, (size + cairn::kPage - 1) / cairn::kPage * cairn::kPage);
}

__attribute__((visibility("default"))) size_t malloc_usable_size(void* ptr) {
  if (ptr == nullptr) return 0;
  if (Arena* arena = cairn::Owner(ptr)) return arena->UsableSize(ptr);
  return cairn::SystemUsableSize(ptr);
}

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                          const pthread_attr_t* attr,
                                                          void* (*routine)(void*), void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (cairn_internal_in_call == 0) return real(thread, attr, routine, arg);
  auto* start = static_cast<cairn::InternalStart*>(__libc_malloc(sizeof(cairn::InternalStart)));
  if (start == nullptr) return EAGAIN;
  *start = {routine, arg};
  int rc = real(thread, attr, &cairn::RunInternalThread, start);
  if (rc != 0) __libc_free(start);
  return rc;
}

// main runs on the fixed stack (process_image.h) when transparent mode
// could start; otherwise as usual, after a message saying why.
using MainFn = int (*)(int, char**, char**);
static MainFn g_program_main = nullptr;

static int MainOnFixedStack(int argc, char** argv, char** envp) {
  cairn::TransparentRuntime& rt = TheRuntime();
  if (!rt.started()) return g_program_main(argc, argv, envp);
  return cairn::RunMainOnStack(rt.stack(), g_program_main, argc, argv, envp);
}

__attribute__((visibility("default"))) int __libc_start_main(
    MainFn main, int argc, char** argv, void (*init)(void), void (*fini)(void),
    void (*rtld_fini)(void), void* stack_end) {
  using Fn = int (*)(MainFn, int, char**, void (*)(void), void (*)(void), void (*)(void), void*);
  Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "__libc_start_main"));
  g_program_main = main;
  cairn::Status s = TheRuntime().Start(argv, argv + argc + 1);
  if (!s.ok()) {
    std::fprintf(stderr, "cairn: transparent mode is off for this run: %s\n", s.ToString().c_str());
  }
  return real(&MainOnFixedStack, argc, argv, init, fini, rtld_fini, stack_end);
}

// MPI: initialisation restores, finalisation finalizes Cairn, the
// collective calls on MPI_COMM_WORLD are safe points, and the waits are
// when [transparent] wait_safe_points says so.
__attribute__((visibility("default"))) int MPI_Init(int* argc, char*** argv) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Init(argc, argv);
  }
  return cairn::AfterInit(rc);
}

__attribute__((visibility("default"))) int MPI_Init_thread(int* argc, char*** argv, int required,
                                                           int* provided) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Init_thread(argc, argv, required, provided);
  }
  return cairn::AfterInit(rc);
}

__attribute__((visibility("default"))) int MPI_Finalize(void) {
  cairn::Status s = TheRuntime().BeforeMpiFinalize();
  if (!s.ok()) cairn::Log(cairn::LogLevel::kError, "transparent mode: {}", s.ToString());
  InsideCairnScope internal;
  return PMPI_Finalize();
}

__attribute__((visibility("default"))) int MPI_Barrier(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) cairn::SafePointFrom("MPI_Barrier");
  InsideCairnScope internal;
  return PMPI_Barrier(comm);
}

__attribute__((visibility("default"))) int MPI_Allreduce(const void* send, void* recv, int count,
                                                         MPI_Datatype type, MPI_Op op,
                                                         MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) cairn::SafePointFrom("MPI_Allreduce");
  InsideCairnScope internal;
  cairn::NoteReceive(recv, count, type);
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}

// The calls that receive into a buffer of the program: its pages count as
// written (NoteReceive), and MPI's allocations in them stay MPI's.
__attribute__((visibility("default"))) int MPI_Recv(void* buf, int count, MPI_Datatype type,
                                                    int source, int tag, MPI_Comm comm,
                                                    MPI_Status* status) {
  InsideCairnScope internal;
  cairn::NoteReceive(buf, count, type);
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

__attribute__((visibility("default"))) int MPI_Irecv(void* buf, int count, MPI_Datatype type,
                                                     int source, int tag, MPI_Comm comm,
                                                     MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(buf, count, type);
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

__attribute__((visibility("default"))) int MPI_Mrecv(void* buf, int count, MPI_Datatype type,
                                                     MPI_Message* message, MPI_Status* status) {
  InsideCairnScope internal;
  cairn::NoteReceive(buf, count, type);
  return PMPI_Mrecv(buf, count, type, message, status);
}

__attribute__((visibility("default"))) int MPI_Imrecv(void* buf, int count, MPI_Datatype type,
                                                      MPI_Message* message, MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(buf, count, type);
  return PMPI_Imrecv(buf, count, type, message, request);
}

__attribute__((visibility("default"))) int MPI_Sendrecv(const void* sendbuf, int sendcount,
                                                        MPI_Datatype sendtype, int dest,
                                                        int sendtag, void* recvbuf, int recvcount,
                                                        MPI_Datatype recvtype, int source,
                                                        int recvtag, MPI_Comm comm,
                                                        MPI_Status* status) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, recvcount, recvtype);
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}

__attribute__((visibility("default"))) int MPI_Sendrecv_replace(void* buf, int count,
                                                                MPI_Datatype type, int dest,
                                                                int sendtag, int source,
                                                                int recvtag, MPI_Comm comm,
                                                                MPI_Status* status) {
  InsideCairnScope internal;
  cairn::NoteReceive(buf, count, type);
  return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
}

__attribute__((visibility("default"))) int MPI_Bcast(void* buffer, int count, MPI_Datatype type,
                                                     int root, MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteReceive(buffer, count, type);
  return PMPI_Bcast(buffer, count, type, root, comm);
}

__attribute__((visibility("default"))) int MPI_Reduce(const void* sendbuf, void* recvbuf,
                                                      int count, MPI_Datatype type, MPI_Op op,
                                                      int root, MPI_Comm comm) {
  InsideCairnScope internal;
  if (cairn::IsRoot(root, comm)) cairn::NoteReceive(recvbuf, count, type);
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

__attribute__((visibility("default"))) int MPI_Allgather(const void* sendbuf, int sendcount,
                                                         MPI_Datatype sendtype, void* recvbuf,
                                                         int recvcount, MPI_Datatype recvtype,
                                                         MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, static_cast<long long>(recvcount) * cairn::Peers(comm), recvtype);
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

__attribute__((visibility("default"))) int MPI_Alltoall(const void* sendbuf, int sendcount,
                                                        MPI_Datatype sendtype, void* recvbuf,
                                                        int recvcount, MPI_Datatype recvtype,
                                                        MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, static_cast<long long>(recvcount) * cairn::Peers(comm), recvtype);
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

__attribute__((visibility("default"))) int MPI_Gather(const void* sendbuf, int sendcount,
                                                      MPI_Datatype sendtype, void* recvbuf,
                                                      int recvcount, MPI_Datatype recvtype,
                                                      int root, MPI_Comm comm) {
  InsideCairnScope internal;
  if (cairn::IsRoot(root, comm)) {
    cairn::NoteReceive(recvbuf, static_cast<long long>(recvcount) * cairn::Peers(comm), recvtype);
  }
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

__attribute__((visibility("default"))) int MPI_Scatter(const void* sendbuf, int sendcount,
                                                       MPI_Datatype sendtype, void* recvbuf,
                                                       int recvcount, MPI_Datatype recvtype,
                                                       int root, MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, recvcount, recvtype);
  return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

__attribute__((visibility("default"))) int MPI_Allgatherv(const void* sendbuf, int sendcount,
                                                          MPI_Datatype sendtype, void* recvbuf,
                                                          const int recvcounts[],
                                                          const int displs[],
                                                          MPI_Datatype recvtype, MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteDisplacedReceive(recvbuf, recvcounts, displs, cairn::Peers(comm), recvtype);
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         comm);
}

__attribute__((visibility("default"))) int MPI_Gatherv(const void* sendbuf, int sendcount,
                                                       MPI_Datatype sendtype, void* recvbuf,
                                                       const int recvcounts[], const int displs[],
                                                       MPI_Datatype recvtype, int root,
                                                       MPI_Comm comm) {
  InsideCairnScope internal;
  if (cairn::IsRoot(root, comm)) {
    cairn::NoteDisplacedReceive(recvbuf, recvcounts, displs, cairn::Peers(comm), recvtype);
  }
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm);
}

__attribute__((visibility("default"))) int MPI_Scatterv(const void* sendbuf,
                                                        const int sendcounts[],
                                                        const int displs[], MPI_Datatype sendtype,
                                                        void* recvbuf, int recvcount,
                                                        MPI_Datatype recvtype, int root,
                                                        MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, recvcount, recvtype);
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

__attribute__((visibility("default"))) int MPI_Alltoallv(const void* sendbuf,
                                                         const int sendcounts[],
                                                         const int sdispls[],
                                                         MPI_Datatype sendtype, void* recvbuf,
                                                         const int recvcounts[],
                                                         const int rdispls[],
                                                         MPI_Datatype recvtype, MPI_Comm comm) {
  InsideCairnScope internal;
  cairn::NoteDisplacedReceive(recvbuf, recvcounts, rdispls, cairn::Peers(comm), recvtype);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

// The non-blocking collectives: noted when posted, as MPI_Irecv.
__attribute__((visibility("default"))) int MPI_Iallreduce(const void* send, void* recv, int count,
                                                          MPI_Datatype type, MPI_Op op,
                                                          MPI_Comm comm, MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(recv, count, type);
  return PMPI_Iallreduce(send, recv, count, type, op, comm, request);
}

__attribute__((visibility("default"))) int MPI_Ibcast(void* buffer, int count, MPI_Datatype type,
                                                      int root, MPI_Comm comm,
                                                      MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(buffer, count, type);
  return PMPI_Ibcast(buffer, count, type, root, comm, request);
}

__attribute__((visibility("default"))) int MPI_Ireduce(const void* sendbuf, void* recvbuf,
                                                       int count, MPI_Datatype type, MPI_Op op,
                                                       int root, MPI_Comm comm,
                                                       MPI_Request* request) {
  InsideCairnScope internal;
  if (cairn::IsRoot(root, comm)) cairn::NoteReceive(recvbuf, count, type);
  return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
}

__attribute__((visibility("default"))) int MPI_Iallgather(const void* sendbuf, int sendcount,
                                                          MPI_Datatype sendtype, void* recvbuf,
                                                          int recvcount, MPI_Datatype recvtype,
                                                          MPI_Comm comm, MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, static_cast<long long>(recvcount) * cairn::Peers(comm), recvtype);
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         request);
}

__attribute__((visibility("default"))) int MPI_Ialltoall(const void* sendbuf, int sendcount,
                                                         MPI_Datatype sendtype, void* recvbuf,
                                                         int recvcount, MPI_Datatype recvtype,
                                                         MPI_Comm comm, MPI_Request* request) {
  InsideCairnScope internal;
  cairn::NoteReceive(recvbuf, static_cast<long long>(recvcount) * cairn::Peers(comm), recvtype);
  return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                        request);
}

__attribute__((visibility("default"))) int MPI_Get(void* origin, int origin_count,
                                                   MPI_Datatype origin_type, int target_rank,
                                                   MPI_Aint target_disp, int target_count,
                                                   MPI_Datatype target_type, MPI_Win win) {
  InsideCairnScope internal;
  cairn::NoteReceive(origin, origin_count, origin_type);
  return PMPI_Get(origin, origin_count, origin_type, target_rank, target_disp, target_count,
                  target_type, win);
}

__attribute__((visibility("default"))) int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Wait(request, status);
  }
  cairn::SafePointAfterWait("MPI_Wait");
  return rc;
}

__attribute__((visibility("default"))) int MPI_Waitall(int count, MPI_Request requests[],
                                                       MPI_Status statuses[]) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Waitall(count, requests, statuses);
  }
  cairn::SafePointAfterWait("MPI_Waitall");
  return rc;
}

__attribute__((visibility("default"))) int MPI_Waitany(int count, MPI_Request requests[],
                                                       int* index, MPI_Status* status) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Waitany(count, requests, index, status);
  }
  cairn::SafePointAfterWait("MPI_Waitany");
  return rc;
}

__attribute__((visibility("default"))) int MPI_Waitsome(int count, MPI_Request requests[],
                                                        int* done, int indices[],
                                                        MPI_Status statuses[]) {
  int rc;
  {
    InsideCairnScope internal;
    rc = PMPI_Waitsome(count, requests, done, indices, statuses);
  }
  cairn::SafePointAfterWait("MPI_Waitsome");
  return rc;
}

}  // extern "C"
