// OVB_HD: a function compiled for the host and, in CUDA code, for the device too (inline).
#pragma once

#if defined(__CUDACC__)
#define OVB_HD __host__ __device__ inline
#else
#define OVB_HD inline
#endif
