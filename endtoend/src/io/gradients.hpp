// --dump-gradients FILE (for tests): the loss and every parameter's whole gradient after one
// forward and backward, before any optimizer step, so that an independent implementation
// (endtoend/reference/check_jax_reference.py) can compare them tensor by tensor.
#pragma once

#include <string>

namespace ovb::gpt {

class Trainer;

// Computes iteration `iter`'s gradients (Trainer::compute_gradients: the weights stay as they
// are) and writes on rank 0 {"iteration", "loss", "tensors": [{"name", "shape": [rows, cols],
// "gradient": [row-major values]}]} in the layout's order (model/layout.hpp names). Collective.
void dump_gradients(Trainer& trainer, int iter, const std::string& path, int rank);

}  // namespace ovb::gpt
