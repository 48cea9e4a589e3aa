// Activation memory of one transformer layer for one micro-batch under Megatron-LM, per GPU of a
// tensor-parallel group of t, in bytes (16-bit activations, fp32 statistics), per recompute mode
// and with or without sequence parallelism. GPT blocks: Korthikanti et al. 2022 (arXiv
// 2205.05198, Table 2). Llama blocks (RMSNorm, RoPE, GQA, SwiGLU, no biases, no dropout, fused
// attention): derived here from the tensors Megatron-Core saves for the backward; the derivation
// is in megatron_activations.cpp and docs/model-megatron.md ("Llama blocks").
#pragma once

#include "ovb/gpt_plan.hpp"
#include "ovb/model/megatron.hpp"

namespace ovb::model {

// The dimensions the formulas read, as doubles (products reach 1e12).
struct LayerActivationShape {
  double s = 0;         // sequence length
  double b = 0;         // micro-batch (sequences)
  double h = 0;         // hidden size
  double ffn = 0;       // MLP width (Llama's SwiGLU ffn_hidden; the GPT formula assumes 4h)
  double heads = 0;     // query heads
  double kv_heads = 0;  // key/value heads (GQA's query groups; = heads without GQA)
  double t = 1;         // tensor-parallel size
  bool sequence_parallel = true;
  // Fused (flash) attention keeps the attention's inputs, output and its fp32 log-sum-exp, not
  // the s x s scores, softmax and dropout of an unfused implementation.
  bool flash_attention = true;
};

LayerActivationShape layer_activation_shape(const GptShape& m, const MegatronConfig& c,
                                            bool flash_attention = true);

// Korthikanti's GPT layer (GELU MLP of 4h, dropout); the attention scores through memory unless
// the attention is fused (x.flash_attention).
double gpt_layer_activation_bytes(const LayerActivationShape& x, Recompute r);
// A Llama layer in Megatron-Core with Transformer Engine (fused RMSNorm + linear, fused attention,
// the fused SwiGLU); selective recomputation is Megatron-Core's default ("core_attn").
double llama_layer_activation_bytes(const LayerActivationShape& x, Recompute r);
// The one of the two that the model's architecture calls for.
double megatron_layer_activation_bytes(const GptShape& m, const MegatronConfig& c,
                                       bool flash_attention = true);

}  // namespace ovb::model
