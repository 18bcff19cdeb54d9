// Process image helpers (process_image.h). This file is built without the
// stack protector: RunMainOnStack's frame outlives a change of the canary
// (SetStackGuard during a restart), so it must carry no canary check.
#include "transparent/process_image.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cairn {
namespace {

constexpr size_t kPage = 4096;

struct ProgramSegments {
  MemoryRange data;   // the writable PT_LOAD
  uintptr_t relro_end = 0;
  uintptr_t load_bias = 0;
  const ElfW(Dyn)* dynamic = nullptr;
};

// dl_iterate_phdr lists the executable first.
int FindProgram(struct dl_phdr_info* info, size_t, void* out) {
  auto* seg = static_cast<ProgramSegments*>(out);
  seg->load_bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && seg->data.begin == 0) {
      seg->data = {begin, begin + ph.p_memsz};
    } else if (ph.p_type == PT_GNU_RELRO) {
      seg->relro_end = begin + ph.p_memsz;
    } else if (ph.p_type == PT_DYNAMIC) {
      seg->dynamic = reinterpret_cast<const ElfW(Dyn)*>(begin);
    }
  }
  return 1;  // the executable only
}

// A dynamic entry's address: ld.so relocates some in place, some not.
uintptr_t DynamicAddress(uintptr_t value, uintptr_t bias) {
  return value < bias ? value + bias : value;
}

// The ranges of R_X86_64_COPY relocations: library variables the
// executable holds a copy of.
std::vector<MemoryRange> CopyRelocations(const ProgramSegments& seg) {
  std::vector<MemoryRange> copies;
  if (seg.dynamic == nullptr) return copies;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_bytes = 0;
  const ElfW(Sym)* symtab = nullptr;
  for (const ElfW(Dyn)* d = seg.dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_RELA) rela = reinterpret_cast<const ElfW(Rela)*>(
                                 DynamicAddress(d->d_un.d_ptr, seg.load_bias));
    if (d->d_tag == DT_RELASZ) rela_bytes = d->d_un.d_val;
    if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(
                                   DynamicAddress(d->d_un.d_ptr, seg.load_bias));
  }
  if (rela == nullptr || symtab == nullptr) return copies;
  for (size_t i = 0; i < rela_bytes / sizeof(ElfW(Rela)); ++i) {
    if (ELF64_R_TYPE(rela[i].r_info) != R_X86_64_COPY) continue;
    uintptr_t at = seg.load_bias + rela[i].r_offset;
    copies.push_back({at, at + symtab[ELF64_R_SYM(rela[i].r_info)].st_size});
  }
  std::sort(copies.begin(), copies.end(),
            [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
  return copies;
}

// Where RunMainOnStack returns to when main returns: in this library's
// data, so at the same address in a restarted run (fixed layout), and
// filled by that run's own swapcontext.
ucontext_t g_return_context;
int g_main_result = 0;
int (*g_main)(int, char**, char**) = nullptr;
int g_argc = 0;
char** g_argv = nullptr;
char** g_envp = nullptr;

void CallMain() { g_main_result = g_main(g_argc, g_argv, g_envp); }

// Copies a null-terminated array of strings to `at`, strings after the
// pointers; returns the copy and advances `at` past it.
char** CopyStrings(char* const* strings, size_t count, char*& at) {
  char** copy = reinterpret_cast<char**>(at);
  at += (count + 1) * sizeof(char*);
  for (size_t i = 0; i < count; ++i) {
    size_t n = std::strlen(strings[i]) + 1;
    std::memcpy(at, strings[i], n);
    copy[i] = at;
    at += n;
  }
  copy[count] = nullptr;
  return copy;
}

size_t CountStrings(char* const* strings) {
  size_t n = 0;
  while (strings != nullptr && strings[n] != nullptr) ++n;
  return n;
}

size_t BytesOf(char* const* strings, size_t count) {
  size_t bytes = (count + 1) * sizeof(char*);
  for (size_t i = 0; i < count; ++i) bytes += std::strlen(strings[i]) + 1;
  return bytes;
}

// main's argv and envp, copied to the top of the fixed stack: a restart
// restores that part of the stack too, so a resumed main finds the
// arguments it was started with at the addresses it holds. The originals
// live on the process's initial stack, which is not captured and whose
// layout shifts with the size of the environment from run to run (job ids,
// ports). Returns the stack left below the copy (all of it, and the
// originals, when the copy would take more than an eighth of it).
MemoryRange CopyArgumentsToStackTop(const MemoryRange& stack, char**& argv, char**& envp) {
  const size_t argc = CountStrings(argv);
  const size_t envc = CountStrings(envp);
  const size_t bytes = BytesOf(argv, argc) + BytesOf(envp, envc);
  if (bytes > stack.bytes() / 8) return stack;
  const uintptr_t begin = (stack.end - bytes) & ~uintptr_t{63};
  char* at = reinterpret_cast<char*>(begin);
  argv = CopyStrings(argv, argc, at);
  envp = CopyStrings(envp, envc, at);
  return {stack.begin, begin};
}

}  // namespace

std::vector<MemoryRange> ProgramDataRanges() {
  ProgramSegments seg;
  dl_iterate_phdr(&FindProgram, &seg);
  std::vector<MemoryRange> ranges;
  if (seg.data.begin == 0) return ranges;
  uintptr_t cursor = std::max(seg.data.begin, seg.relro_end);
  for (const MemoryRange& copy : CopyRelocations(seg)) {
    if (copy.end <= cursor || copy.begin >= seg.data.end) continue;
    if (copy.begin > cursor) ranges.push_back({cursor, copy.begin});
    cursor = std::max(cursor, copy.end);
  }
  if (cursor < seg.data.end) ranges.push_back({cursor, seg.data.end});
  return ranges;
}

Result<MemoryRange> ReserveFixedStack(uintptr_t top, size_t bytes) {
  if (top % kPage != 0 || bytes % kPage != 0 || bytes < 16 * kPage) {
    return Error(Code::kInvalidArgument,
                 "fixed stack ending at {:#x} of {} bytes: must be whole pages, at least 64 KiB",
                 top, bytes);
  }
  uintptr_t low = top - bytes - kPage;
  void* got = mmap(reinterpret_cast<void*>(low), bytes + kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED || got != reinterpret_cast<void*>(low)) {
    if (got != MAP_FAILED) munmap(got, bytes + kPage);
    return Error(Code::kMismatch,
                 "main's fixed stack {:#x}-{:#x} cannot be mapped there ({}): the range is taken",
                 low, top, got == MAP_FAILED ? std::strerror(errno) : "moved by the kernel");
  }
  mprotect(got, kPage, PROT_NONE);  // guard page: an overflow faults instead of corrupting
  return MemoryRange{low + kPage, top};
}

int RunMainOnStack(const MemoryRange& stack, int (*main)(int, char**, char**), int argc,
                   char** argv, char** envp) {
  const MemoryRange below = CopyArgumentsToStackTop(stack, argv, envp);
  g_main = main;
  g_argc = argc;
  g_argv = argv;
  g_envp = envp;
  ucontext_t on_stack;
  getcontext(&on_stack);
  on_stack.uc_stack.ss_sp = reinterpret_cast<void*>(below.begin);
  on_stack.uc_stack.ss_size = below.bytes();
  on_stack.uc_link = &g_return_context;
  makecontext(&on_stack, &CallMain, 0);
  swapcontext(&g_return_context, &on_stack);
  return g_main_result;
}

uint64_t StackGuard() {
  uint64_t value;
  asm volatile("movq %%fs:0x28, %0" : "=r"(value));
  return value;
}

void SetStackGuard(uint64_t value) { asm volatile("movq %0, %%fs:0x28" : : "r"(value) : "memory"); }

uintptr_t StackPointerOf(const ucontext_t& context) {
  return static_cast<uintptr_t>(context.uc_mcontext.gregs[REG_RSP]);
}

Status EnsureFixedLayout(char** argv, char** envp) {
  int current = personality(0xffffffff);
  if (current < 0) return Error(Code::kIo, "personality: {}", std::strerror(errno));
  if (current & ADDR_NO_RANDOMIZE) return Status::Ok();
  if (personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE) < 0) {
    return Error(Code::kUnsupported, "personality(ADDR_NO_RANDOMIZE): {}", std::strerror(errno));
  }
  execve("/proc/self/exe", argv, envp);
  int err = errno;
  personality(static_cast<unsigned long>(current));
  return Error(Code::kIo, "re-executing /proc/self/exe without address randomisation: {}",
               std::strerror(err));
}

}  // namespace cairn
