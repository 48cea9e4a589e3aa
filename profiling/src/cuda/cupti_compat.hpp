// CUPTI version differences, in one place: the activity record structs the tracer reads. CUPTI
// writes every record in the newest layout its headers define, so the tracer casts to these.
// Only the fields present in every listed version are used (times, ids, grid/block, name, bytes;
// a peer copy's source and destination devices).
#pragma once

#include <cupti.h>

namespace ovb::trace::cuda {

#if CUPTI_API_VERSION >= 130000  // CUDA 13.x
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using SyncRecord = CUpti_ActivitySynchronization2;
#elif CUPTI_API_VERSION >= 18  // CUDA 12.x
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
using SyncRecord = CUpti_ActivitySynchronization;
#else
#error "the OverlapBench tracer needs CUPTI from CUDA 12.0 or newer"
#endif
using MemsetRecord = CUpti_ActivityMemset4;
using PeerCopyRecord = CUpti_ActivityMemcpyPtoP4;  // CUPTI_ACTIVITY_KIND_MEMCPY2 (12.x and 13.x)
using MarkerRecord = CUpti_ActivityMarker2;
using ApiRecord = CUpti_ActivityAPI;
using ExternalCorrelationRecord = CUpti_ActivityExternalCorrelation;

// External-correlation kind the tracer pushes for its ranges (PyTorch's Kineto uses CUSTOM0/1 for
// its own ops; a process runs one CUPTI subscriber, so only one of them is ever active).
inline constexpr CUpti_ExternalCorrelationKind kRangeCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

}  // namespace ovb::trace::cuda
