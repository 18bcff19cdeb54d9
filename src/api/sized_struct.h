// SizedStructWriter: fills a caller's public struct by the ABI rule of
// cairn.h (docs/api.md): only the fields that lie whole within the caller's
// `size` are written. Shared by the entry points of every api/*_c.cc file.
// Thread-safety: a writer belongs to one call.
#ifndef CAIRN_API_SIZED_STRUCT_H_
#define CAIRN_API_SIZED_STRUCT_H_

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "base/status.h"

namespace cairn {

// Copies text into a fixed char array, truncated and always terminated.
template <size_t N>
void CopyText(const std::string& text, char (&out)[N]) {
  size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Fills a caller's struct by the ABI rule of cairn.h: only fields that lie
// whole within the caller's `size` are written, so a caller built against
// an older, shorter struct never has a byte written past its end.
template <typename Struct>
class SizedStructWriter {
 public:
  // kInvalidArgument unless out can hold `size` and the first field after it.
  template <typename First>
  static Result<SizedStructWriter> Open(const char* call, Struct* out, First Struct::*first) {
    if (out == nullptr) return Error(Code::kInvalidArgument, "{}: info is NULL", call);
    SizedStructWriter writer(out);
    size_t least = writer.EndOf(first);
    if (out->size < least) {
      return Error(Code::kInvalidArgument,
                   "{}: info->size is {}, at least {} needed (initialize the struct with its "
                   "_INIT macro)",
                   call, out->size, least);
    }
    return writer;
  }

  template <typename Field, typename Value>
  void Set(Field Struct::*field, const Value& value) {
    if (EndOf(field) <= out_->size) out_->*field = static_cast<Field>(value);
  }
  template <size_t N>
  void SetText(char (Struct::*field)[N], const std::string& text) {
    if (EndOf(field) <= out_->size) CopyText(text, out_->*field);
  }

 private:
  explicit SizedStructWriter(Struct* out) : out_(out) {}
  template <typename Field>
  size_t EndOf(Field Struct::*field) const {
    auto offset = reinterpret_cast<const char*>(&(out_->*field)) -
                  reinterpret_cast<const char*>(out_);
    return static_cast<size_t>(offset) + sizeof(Field);
  }

  Struct* out_;
};

}  // namespace cairn

#endif  // CAIRN_API_SIZED_STRUCT_H_
