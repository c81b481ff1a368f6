#include "vt/dtype.h"

#include <gtest/gtest.h>

TEST(DType, RowBytesFollowBlockGeometry) {
  EXPECT_EQ(vt::row_bytes(vt::DType::F32, 64), 256u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q8_0, 64), 68u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q4_1, 576), 18u * 20u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q4_K, 512), 288u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q6_K, 256), 210u);
}

TEST(DType, GgmlIds) {
  EXPECT_EQ(vt::dtype_from_ggml(8), vt::DType::Q8_0);
  EXPECT_EQ(vt::dtype_from_ggml(30), vt::DType::BF16);
  EXPECT_FALSE(vt::dtype_from_ggml(6).has_value());  // Q5_0: not supported
  EXPECT_EQ(vt::ggml_type_name(6), "Q5_0");
}
