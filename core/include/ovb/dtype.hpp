// Element types of buffers and collectives, and exact host-side conversions for checking results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ovb {

enum class DType { f32, f16, bf16 };

std::size_t size_of(DType t);
std::string_view name_of(DType t);
// Parses "fp32"/"f32"/"float", "fp16"/"f16"/"half", "bf16"; throws UsageError otherwise.
DType parse_dtype(std::string_view s);

// IEEE binary16 and bfloat16 from/to float, round-to-nearest-even (as the CUDA intrinsics do).
std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);

// Reads element i of a host array of type t as float.
float load_host(const void* src, DType t, std::size_t i);
void store_host(void* dst, DType t, std::size_t i, float v);

}  // namespace ovb
