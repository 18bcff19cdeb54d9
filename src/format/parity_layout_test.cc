#include "format/parity_layout.h"

#include <gtest/gtest.h>

#include "format/layout.h"

namespace cairn {
namespace {

ParityHeader SampleHeader() {
  ParityHeader h;
  h.scheme = ParityScheme::kRs;
  h.parity_rows = 2;
  h.group = 3;
  h.index = 1;
  h.version = 42;
  h.chunk_size = 3 * kBlockSize + 64;
  h.block_size = kBlockSize;
  for (uint32_t i = 0; i < 4; ++i) {
    ParityMember m{.rank = 10 + i, .node = i, .part_size = i * 100000ull, .part_crcs = {},
                   .parity_crcs = {}};
    for (uint64_t b = 0; b < h.BlocksOf(m.part_size); ++b) m.part_crcs.push_back(i * 1000 + b);
    for (uint64_t b = 0; b < h.parity_rows * h.RowBlocks(); ++b) m.parity_crcs.push_back(7 * b + i);
    h.members.push_back(m);
  }
  return h;
}

TEST(ParityLayoutTest, HeaderRoundTripsAndSaysItsLength) {
  const ParityHeader h = SampleHeader();
  const std::string bytes = EncodeParityHeader(h) + "rows follow";
  uint64_t header_bytes = 0;
  auto back = DecodeParityHeader(bytes, "r000011.parity", &header_bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(header_bytes, bytes.size() - std::string("rows follow").size());
  EXPECT_EQ(back->scheme, ParityScheme::kRs);
  EXPECT_EQ(back->parity_rows, 2u);
  EXPECT_EQ(back->group, 3u);
  EXPECT_EQ(back->index, 1u);
  EXPECT_EQ(back->version, 42);
  EXPECT_EQ(back->chunk_size, h.chunk_size);
  ASSERT_EQ(back->members.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(back->members[i].rank, h.members[i].rank);
    EXPECT_EQ(back->members[i].node, h.members[i].node);
    EXPECT_EQ(back->members[i].part_size, h.members[i].part_size);
    EXPECT_EQ(back->members[i].part_crcs, h.members[i].part_crcs);
    EXPECT_EQ(back->members[i].parity_crcs, h.members[i].parity_crcs);
  }
  EXPECT_EQ(ParityFileName(11), "r000011.parity");
}

TEST(ParityLayoutTest, EveryFlippedByteAndEveryTruncationIsCorrupt) {
  const std::string bytes = EncodeParityHeader(SampleHeader());
  uint64_t n = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    auto r = DecodeParityHeader(bad, "p", &n);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    EXPECT_EQ(r.status().code(), Code::kCorrupt);
    EXPECT_NE(r.status().message().find("parity file 'p'"), std::string::npos);
  }
  for (size_t len = 0; len < bytes.size(); len += 7) {
    EXPECT_EQ(DecodeParityHeader(bytes.substr(0, len), "p", &n).status().code(), Code::kCorrupt)
        << len;
  }
}

TEST(ParityLayoutTest, BlockCrcsFindTheFirstBadBlock) {
  std::vector<uint8_t> data(2 * kBlockSize + 5, 9);
  const auto crcs = BlockCrcs(data, kBlockSize);
  ASSERT_EQ(crcs.size(), 3u);
  EXPECT_EQ(FirstBadBlock(data, kBlockSize, crcs), -1);
  data[kBlockSize + 3] ^= 1;
  EXPECT_EQ(FirstBadBlock(data, kBlockSize, crcs), 1);
  data.resize(kBlockSize);  // shorter than recorded: the missing block is bad
  EXPECT_EQ(FirstBadBlock(data, kBlockSize, crcs), 1);
}

}  // namespace
}  // namespace cairn
