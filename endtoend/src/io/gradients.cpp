// --dump-gradients FILE (see gradients.hpp).
#include "io/gradients.hpp"

#include <nlohmann/json.hpp>

#include <vector>

#include "model/layout.hpp"
#include "ovb/io.hpp"
#include "train/trainer.hpp"

namespace ovb::gpt {

void dump_gradients(Trainer& trainer, int iter, const std::string& path, int rank) {
  const double loss = trainer.compute_gradients(iter);
  nlohmann::json tensors = nlohmann::json::array();
  // Every rank holds the layout's tensors (count 0 where it has no piece): the same names, in
  // the same order, for the collective gathers.
  for (const TensorDesc& t : trainer.layout().tensors) {
    std::vector<float> g = trainer.global_tensor(t.name, true);
    if (rank == 0)
      tensors.push_back(
          {{"name", t.name}, {"shape", {t.rows, t.cols}}, {"gradient", std::move(g)}});
  }
  if (rank == 0)
    write_json(path, {{"iteration", iter}, {"loss", loss}, {"tensors", std::move(tensors)}});
}

}  // namespace ovb::gpt
