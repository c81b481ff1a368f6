#include "vt/dtype.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

TEST(DType, RowBytesFollowBlockGeometry) {
  EXPECT_EQ(vt::row_bytes(vt::DType::F32, 64), 256u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q8_0, 64), 68u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q4_1, 576), 18u * 20u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q4_K, 512), 288u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q6_K, 256), 210u);
  // GGML's block sizes (ggml_type_size / ggml_blck_size) for the rest of the zoo.
  EXPECT_EQ(vt::row_bytes(vt::DType::Q5_0, 576), 18u * 22u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q5_1, 576), 18u * 24u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q2_K, 1536), 6u * 84u);
  EXPECT_EQ(vt::row_bytes(vt::DType::Q3_K, 1536), 6u * 110u);
  EXPECT_EQ(vt::row_bytes(vt::DType::IQ4_NL, 576), 18u * 18u);
  EXPECT_EQ(vt::row_bytes(vt::DType::IQ4_XS, 1536), 6u * 136u);
  EXPECT_EQ(vt::row_bytes(vt::DType::MXFP4, 2880), 90u * 17u);  // a GPT-OSS expert row
}

TEST(DType, GgmlIds) {
  EXPECT_EQ(vt::dtype_from_ggml(8), vt::DType::Q8_0);
  EXPECT_EQ(vt::dtype_from_ggml(30), vt::DType::BF16);
  const struct {
    uint32_t id;
    vt::DType t;
    const char* name;
  } zoo[] = {{6, vt::DType::Q5_0, "Q5_0"},      {7, vt::DType::Q5_1, "Q5_1"},
             {10, vt::DType::Q2_K, "Q2_K"},     {11, vt::DType::Q3_K, "Q3_K"},
             {20, vt::DType::IQ4_NL, "IQ4_NL"}, {23, vt::DType::IQ4_XS, "IQ4_XS"},
             {39, vt::DType::MXFP4, "MXFP4"}};
  for (const auto& z : zoo) {
    EXPECT_EQ(vt::dtype_from_ggml(z.id), z.t) << z.name;
    EXPECT_EQ(vt::ggml_type_name(z.id), z.name);
    std::string lower = z.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    EXPECT_EQ(vt::dtype_name(z.t), lower);
  }
  // Types we do not run stay unsupported and keep their GGML names for the error message.
  EXPECT_FALSE(vt::dtype_from_ggml(16).has_value());
  EXPECT_EQ(vt::ggml_type_name(16), "IQ2_XXS");
  EXPECT_FALSE(vt::dtype_from_ggml(34).has_value());
  EXPECT_EQ(vt::ggml_type_name(34), "TQ1_0");
  EXPECT_FALSE(vt::dtype_from_ggml(40).has_value());
}
