// The GPU gates' entry point: without a usable CUDA device it fails loudly (exit 1, with
// the reason) instead of skipping, so a run on the wrong machine is never counted as a pass.
#include <gtest/gtest.h>

#include <cstdio>

#include "vt/cuda/device_checks.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  const std::string problem = vt::cuda::device_problem(vt::cuda::query_device(0));
  if (!problem.empty()) {
    std::fprintf(stderr,
                 "cuda_tests: %s\n"
                 "cuda_tests: these are GPU gates; run them on a machine with a CUDA device of "
                 "compute capability >= 9.0 (scripts/gpu_check.sh). FAILED, not skipped.\n",
                 problem.c_str());
    return 1;
  }
  return RUN_ALL_TESTS();
}
