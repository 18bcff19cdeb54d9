// Little-endian encoding of the fixed-width fields of Cairn's files.
// ByteReader never reads past its end: a short input sets an error that
// the caller turns into "file truncated". Thread-safety: values.
#ifndef CAIRN_FORMAT_BYTES_H_
#define CAIRN_FORMAT_BYTES_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cairn {

// Stores v at `at` little-endian whatever the host (the compiler makes
// the loop a single store).
template <typename T>
inline void StoreLittleEndian(char* at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<char>(v >> (8 * i));
}

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Fixed(v); }
  void U32(uint32_t v) { Fixed(v); }
  void U64(uint64_t v) { Fixed(v); }
  void I64(int64_t v) { Fixed(static_cast<uint64_t>(v)); }
  void F64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    Fixed(bits);
  }
  void Bytes(std::string_view s) { out_.append(s); }
  void String16(std::string_view s) {  // u16 length + bytes
    U16(static_cast<uint16_t>(s.size()));
    Bytes(s);
  }
  std::string& data() { return out_; }

 private:
  template <typename T>
  void Fixed(T v) {
    char bytes[sizeof(T)];
    StoreLittleEndian(bytes, v);
    out_.append(bytes, sizeof(T));
  }
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  uint8_t U8() { return static_cast<uint8_t>(Fixed<uint8_t>()); }
  uint16_t U16() { return Fixed<uint16_t>(); }
  uint32_t U32() { return Fixed<uint32_t>(); }
  uint64_t U64() { return Fixed<uint64_t>(); }
  int64_t I64() { return static_cast<int64_t>(Fixed<uint64_t>()); }
  double F64() {
    uint64_t bits = Fixed<uint64_t>();
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  std::string Bytes(size_t n) {
    if (!Need(n)) return {};
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // Bytes(n) into dst without making a string; false (and !ok()) if fewer
  // than n remain.
  bool CopyTo(void* dst, size_t n) {
    if (!Need(n)) return false;
    std::memcpy(dst, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string String16() { return Bytes(U16()); }
  bool ok() const { return ok_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return ok_ ? in_.size() - pos_ : 0; }

 private:
  bool Need(size_t n) {
    if (!ok_ || in_.size() - pos_ < n) ok_ = false;
    return ok_;
  }
  template <typename T>
  T Fixed() {
    if (!Need(sizeof(T))) return 0;
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<T>(static_cast<T>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i));
    }
    pos_ += sizeof(T);
    return v;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace cairn

#endif  // CAIRN_FORMAT_BYTES_H_
