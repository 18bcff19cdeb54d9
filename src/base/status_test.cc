#include "base/status.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace cairn {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Error(Code::kInvalidArgument, "{} is odd", x);
  return x / 2;
}

Status Quarter(int x, int* out) {
  CAIRN_ASSIGN_OR_RETURN(int h, Half(x));
  CAIRN_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(StatusTest, ResultCarriesValueOrError) {
  int q = 0;
  EXPECT_TRUE(Quarter(8, &q).ok());
  EXPECT_EQ(q, 2);
  Status s = Quarter(6, &q);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "3 is odd");
}

TEST(StatusTest, AnnotateKeepsCode) {
  Status s = Error(Code::kCorrupt, "block 3 bad").Annotate("reading r0.part");
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_EQ(s.message(), "reading r0.part: block 3 bad");
  EXPECT_TRUE(Status::Ok().Annotate("x").ok());
}

TEST(StatusTest, ErrnoMapsNoSpace) {
  EXPECT_EQ(ErrnoError(ENOSPC, "write", "/x").code(), Code::kNoSpace);
  EXPECT_EQ(ErrnoError(EIO, "write", "/x").code(), Code::kIo);
  EXPECT_NE(ErrnoError(EIO, "write", "/x").message().find("'/x'"), std::string::npos);
}

}  // namespace
}  // namespace cairn
