// A job of several ranks as threads of this process (ThreadComm), each rank
// with its own Engine, for the reliability tests that run whole jobs on
// real files without MPI.
#ifndef CAIRN_TESTS_RELIABILITY_THREAD_JOB_H_
#define CAIRN_TESTS_RELIABILITY_THREAD_JOB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "comm/thread_comm.h"
#include "runtime/engine.h"

namespace cairn_test {

// Runs `ranks` ranks, ranks_per_node to a virtual node; each opens an
// engine, protects `words` 64-bit words as region 0, runs body(rank,
// engine, state) and finalizes. Returns when every rank has.
inline void RunThreadJob(
    int ranks, int ranks_per_node, size_t words, cairn::Env* env, const cairn::Config& config,
    const std::function<void(int, cairn::Engine&, std::vector<uint64_t>&)>& body) {
  std::vector<int> nodes;
  for (int r = 0; r < ranks; ++r) nodes.push_back(r / ranks_per_node);
  cairn::ThreadGroup group(nodes);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      auto engine = cairn::Engine::Create(std::make_unique<cairn::ThreadComm>(&group, r), config,
                                          env, cairn::Clock::Real());
      ASSERT_TRUE(engine.ok()) << engine.status().ToString();
      std::vector<uint64_t> state(words);
      ASSERT_TRUE((*engine)->Protect(0, state.data(), state.size(), sizeof(uint64_t)).ok());
      body(r, **engine, state);
      cairn::Status done = (*engine)->Finalize();
      EXPECT_TRUE(done.ok()) << done.ToString();
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace cairn_test

#endif  // CAIRN_TESTS_RELIABILITY_THREAD_JOB_H_
