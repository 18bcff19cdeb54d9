/* Entry points of libcairn that only libcairn_intercept.so calls: not part
 * of the public API (cairn.h), and may change with any release; both
 * libraries ship together. */
#ifndef CAIRN_API_TRANSPARENT_INTERNAL_H_
#define CAIRN_API_TRANSPARENT_INTERNAL_H_

#include "cairn/cairn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Non-zero while this thread runs a Cairn entry point. The allocations
 * made then are Cairn's, not the program's: libcairn_intercept.so sends
 * them to the system allocator, so that they neither dirty the captured
 * heap nor are rewritten by a restore of it. Initial-exec: the intercept
 * library reads it on every malloc, and libcairn.so is always loaded at
 * start-up with it (its DT_NEEDED). */
extern CAIRN_EXPORT __thread int cairn_internal_in_call __attribute__((tls_model("initial-exec")));

/* Notes how the pages of the next checkpoint were found: the tracking
 * method's name and the arena pages written since the previous version, of
 * pages_total captured. cairn_last_checkpoint reports it once that
 * checkpoint commits. Not guarded, never fails. */
CAIRN_EXPORT void cairn_internal_note_tracking(const char *method,
                                               unsigned long long pages_written,
                                               unsigned long long pages_total);

/* For the next checkpoint only: the pages of region id written since
 * version since_version of that checkpoint's name, as run_count runs of
 * (first page, page count) in runs[2 * run_count], pages of page_size bytes
 * from base (the region's first byte). With incremental dedup the other
 * pages are not hashed again (Engine::NoteChangedPages). A call that fails
 * leaves no note: every page is hashed. */
CAIRN_EXPORT int cairn_internal_note_changed_pages(int id, long long since_version,
                                                   const void *base, size_t page_size,
                                                   const unsigned long long *runs,
                                                   size_t run_count);

#ifdef __cplusplus
}

namespace cairn {

/* Counts this thread as inside Cairn (cairn_internal_in_call) for a scope:
 * libcairn's entry points and libcairn_intercept.so's wrappers alike. Its
 * end puts back the count it found instead of decrementing: a
 * transparent-mode restore jumps (setcontext) out of scopes whose ends
 * never run, into the saved frames of scopes that then end, each of which
 * must leave the count as it was when the checkpoint was taken. */
class InsideCairnScope {
 public:
  InsideCairnScope() : previous_(cairn_internal_in_call) { cairn_internal_in_call = previous_ + 1; }
  ~InsideCairnScope() { cairn_internal_in_call = previous_; }
  InsideCairnScope(const InsideCairnScope&) = delete;
  InsideCairnScope& operator=(const InsideCairnScope&) = delete;

 private:
  int previous_;
};

}  // namespace cairn
#endif

#endif /* CAIRN_API_TRANSPARENT_INTERNAL_H_ */
