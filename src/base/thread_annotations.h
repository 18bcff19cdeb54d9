// Thread-safety annotations that clang's -Wthread-safety checks (after
// LevelDB's port/thread_annotations.h and clang's "Thread Safety Analysis"
// documentation). Other compilers see empty macros. A member written to by
// several threads names its lock with GUARDED_BY; a function that expects a
// lock held says REQUIRES, one that takes it itself EXCLUDES.
// Every clang build compiles with -Werror=thread-safety (CMakeLists.txt).
// Thread-safety: macros only.
#ifndef CAIRN_BASE_THREAD_ANNOTATIONS_H_
#define CAIRN_BASE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define CAIRN_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CAIRN_THREAD_ANNOTATION(x)
#endif

// A class that is a lock (a capability named `x` in the diagnostics).
#define CAPABILITY(x) CAIRN_THREAD_ANNOTATION(capability(x))
#define LOCKABLE CAIRN_THREAD_ANNOTATION(lockable)
// An RAII class that holds a capability for its lifetime.
#define SCOPED_CAPABILITY CAIRN_THREAD_ANNOTATION(scoped_lockable)

// The member may be read or written only with the lock held.
#define GUARDED_BY(x) CAIRN_THREAD_ANNOTATION(guarded_by(x))
// What the pointer member points at may be touched only with the lock held.
#define PT_GUARDED_BY(x) CAIRN_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) CAIRN_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) CAIRN_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))

// The caller must hold the lock(s) (exclusively / shared).
#define REQUIRES(...) CAIRN_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) CAIRN_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// The function takes / releases the lock(s) and returns holding / not holding them.
#define ACQUIRE(...) CAIRN_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) CAIRN_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) CAIRN_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) CAIRN_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) CAIRN_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the lock(s): the function takes them itself.
#define EXCLUDES(...) CAIRN_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function checks at run time that the lock is held.
#define ASSERT_CAPABILITY(x) CAIRN_THREAD_ANNOTATION(assert_capability(x))
// The function returns a reference to the lock.
#define RETURN_CAPABILITY(x) CAIRN_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function; say why beside it.
#define NO_THREAD_SAFETY_ANALYSIS CAIRN_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // CAIRN_BASE_THREAD_ANNOTATIONS_H_
