// Inputs, double-precision reference and tolerances of ovb-membw's check (see mem_reference.hpp).
#include "membw/mem_reference.hpp"

#include <algorithm>
#include <cmath>

#include "harness/pattern.hpp"
#include "membw/mem_kernels.hpp"

namespace ovb::mb {

namespace {
using K = MemConstants;

double eighths(MemClass c, int b, std::uint64_t i) {
  return (small_int(i, 31 * static_cast<std::uint64_t>(c) + static_cast<std::uint64_t>(b), 16) -
          8) /
         8.0;
}

float round_to(DType t, float v) {
  unsigned char b[4];
  store_host(b, t, 0, v);
  return load_host(b, t, 0);
}

double gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
}  // namespace

double mem_input(MemClass c, int b, std::uint64_t i, std::int64_t row) {
  const std::vector<MemBuf> lay = mem_layout(c, DType::f32);
  const char* name = lay[static_cast<std::size_t>(b)].name;
  const std::string_view nm(name);
  if (nm == "gamma") return 1.0 + eighths(c, b, i) / 2;               // [0.5, 1.5)
  if (nm == "target") return small_int(i, 7, static_cast<int>(row));  // a column
  if (nm == "v") return (eighths(c, b, i) + 1.0) / 4;                 // [0, 0.5)
  if (nm == "m") return eighths(c, b, i) / 8;
  return eighths(c, b, i);
}

std::vector<std::vector<double>> mem_reference_row(MemClass c, DType t, std::int64_t r,
                                                   std::int64_t row) {
  const std::vector<MemBuf> lay = mem_layout(c, t);
  std::vector<std::vector<double>> out(lay.size());
  const auto first = static_cast<std::uint64_t>(r * row);
  auto in_row = [&](int b) {
    std::vector<double> v(static_cast<std::size_t>(row));
    for (std::int64_t j = 0; j < row; ++j)
      v[static_cast<std::size_t>(j)] = mem_input(c, b, first + static_cast<std::uint64_t>(j), row);
    return v;
  };
  auto col = [&](int b) {
    std::vector<double> v(static_cast<std::size_t>(row));
    for (std::int64_t j = 0; j < row; ++j)
      v[static_cast<std::size_t>(j)] = mem_input(c, b, static_cast<std::uint64_t>(j), row);
    return v;
  };
  const std::size_t R = static_cast<std::size_t>(row);
  switch (c) {
    case MemClass::copy: out[1] = in_row(0); break;
    case MemClass::residual: {
      const auto a = in_row(0), b = in_row(1);
      out[2].resize(R);
      for (std::size_t j = 0; j < R; ++j) out[2][j] = a[j] + b[j];
      break;
    }
    case MemClass::layernorm:
    case MemClass::rmsnorm: {
      const bool rms = c == MemClass::rmsnorm;
      const auto x = in_row(0), g = col(1);
      double mean = 0, var = 0;
      if (!rms) {
        for (double v : x) mean += v;
        mean /= static_cast<double>(row);
      }
      for (double v : x) var += (v - mean) * (v - mean);
      const double rstd = 1.0 / std::sqrt(var / static_cast<double>(row) + K::ln_eps);
      std::vector<double> y(R);
      const std::vector<double> beta = rms ? std::vector<double>(R, 0.0) : col(2);
      for (std::size_t j = 0; j < R; ++j) y[j] = (x[j] - mean) * rstd * g[j] + beta[j];
      out[rms ? 2 : 3] = y;
      out[rms ? 3 : 4] = rms ? std::vector<double>{rstd} : std::vector<double>{mean, rstd};
      break;
    }
    case MemClass::bias_gelu: {
      const auto x = in_row(0), b = col(1);
      out[2].resize(R);
      out[3].resize(R);
      for (std::size_t j = 0; j < R; ++j) {
        // The pre-activation is stored in the dtype and GELU reads it back from there.
        out[2][j] = static_cast<double>(round_to(t, static_cast<float>(x[j] + b[j])));
        out[3][j] = gelu(out[2][j]);
      }
      break;
    }
    case MemClass::swiglu: {
      const auto g = in_row(0), u = in_row(1);
      out[2].resize(R);
      for (std::size_t j = 0; j < R; ++j) out[2][j] = g[j] / (1.0 + std::exp(-g[j])) * u[j];
      break;
    }
    case MemClass::rope: {
      const auto x = in_row(0);
      const double pos = static_cast<double>(r % K::rope_positions);
      out[0].resize(R);
      for (std::size_t i = 0; i < R / 2; ++i) {
        const double ang =
            pos * std::pow(double{K::rope_theta}, -2.0 * static_cast<double>(i) / double(row));
        const double c = std::cos(ang), s = std::sin(ang);
        out[0][2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
        out[0][2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
      }
      break;
    }
    case MemClass::dropout: {
      const auto x = in_row(0);
      out[1].resize(R);
      out[2].resize(R);
      for (std::size_t j = 0; j < R; ++j) {
        const bool keep = dropout_keep(first + j, K::dropout_seed, K::dropout_p);
        out[2][j] = keep ? 1 : 0;
        out[1][j] = keep ? x[j] / (1.0 - static_cast<double>(K::dropout_p)) : 0.0;
      }
      break;
    }
    case MemClass::softmax:
    case MemClass::cross_entropy: {
      const auto x = in_row(0);
      const double mx = *std::max_element(x.begin(), x.end());
      double sum = 0;
      for (double v : x) sum += std::exp(v - mx);
      if (c == MemClass::cross_entropy) {
        const auto target =
            static_cast<std::size_t>(mem_input(c, 1, static_cast<std::uint64_t>(r), row));
        out[2] = {mx + std::log(sum) - x[target]};
      } else {
        out[1].resize(R);
        for (std::size_t j = 0; j < R; ++j) out[1][j] = std::exp(x[j] - mx) / sum;
      }
      break;
    }
    case MemClass::adamw: {
      const auto p = in_row(0), m = in_row(1), v = in_row(2), g = in_row(3);
      const double b1 = K::beta1, b2 = K::beta2, lr = K::lr, wd = K::weight_decay;
      const double c1 = 1.0 / (1.0 - std::pow(b1, K::adam_step)),
                   c2 = 1.0 / (1.0 - std::pow(b2, K::adam_step));
      for (std::size_t k = 0; k < 3; ++k) out[k].resize(R);
      for (std::size_t j = 0; j < R; ++j) {
        const double m1 = b1 * m[j] + (1 - b1) * g[j], v1 = b2 * v[j] + (1 - b2) * g[j] * g[j];
        out[1][j] = m1;
        out[2][j] = v1;
        out[0][j] = p[j] - lr * (m1 * c1 / (std::sqrt(v1 * c2) + K::adam_eps) + wd * p[j]);
      }
      if (lay.size() > 4) out[4] = out[0];
      break;
    }
    case MemClass::grad_accum: {
      const auto acc = in_row(0), g = in_row(1);
      out[0].resize(R);
      for (std::size_t j = 0; j < R; ++j) out[0][j] = acc[j] + g[j];
      break;
    }
  }
  return out;
}

double mem_tolerance(MemClass c, Elem e, DType t, std::int64_t row) {
  const double ulp = std::ldexp(1.0, -24);
  const bool row_sum = c == MemClass::layernorm || c == MemClass::rmsnorm ||
                       c == MemClass::softmax || c == MemClass::cross_entropy;
  double arith = row_sum ? 4.0 * static_cast<double>(row) * ulp : 64 * ulp;
  // RoPE's fp32 angle pos * powf(theta, e): powf within a few ulp (2^-21 relative), the product
  // half an ulp, so |angle error| < rope_positions * 2^-20; a pair of |x| < 1 turns by it.
  if (c == MemClass::rope)
    arith += 2 * static_cast<double>(K::rope_positions) * std::ldexp(1.0, -20);
  return (e == Elem::act && t != DType::f32 ? std::ldexp(1.0, -8) : 0.0) + arith;
}

}  // namespace ovb::mb
