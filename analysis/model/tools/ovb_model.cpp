// ovb-model: the performance model of the 4D algorithm (docs/model.md).
//   ovb-model search    --machine M --preset 175B --gpus 65536 --batch 8192 [--strategy 4d|megatron|all]
//   ovb-model versus    --machine M --preset 175B --gpus 1024 --batch 1024 [--json OUT]
//   ovb-model validate  [--runs analysis/validation/published_runs.json] [--json OUT]
//   ovb-model explain   2x2x2x4[:order] --machine M --preset 1.3B --batch 16 [--json OUT]
//   ovb-model calibrate --base M --collective F[@GRID]... --gemm F... --overlap F... --out MACHINE
//   ovb-model compare   --machine M RESULT_OR_FOLDER... [--top-k 3] [--json OUT]
//   ovb-model export-chakra 2x2x2x4 --machine M --preset 1.3B --batch 16 --out DIR [--ranks 0,7]
//   ovb-model gemm      --machine M --shapes 2048x5120x10240 [--chunks 1,2,4,8 --split m,n]
//   ovb-model gemm      --machine M --measured ovb-overlap-decomposition.json
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "ovb/cli.hpp"
#include "ovb/run_main.hpp"

int main(int argc, char** argv) {
  return ovb::run_one_process("ovb-model", [&](const ovb::LaunchContext& ctx) {
    CLI::App app{
        "OverlapBench performance model: predicted iteration time of the 4D algorithm and of "
        "the Megatron-LM strategy, "
        "configuration search, calibration from microbenchmarks, model vs measurement "
        "(docs/model.md)",
        "ovb-model"};
    app.require_subcommand(1);
    std::vector<std::pair<CLI::App*, std::unique_ptr<ovb::model::cli::Command>>> cmds;
    auto add = [&](const char* name, const char* help, auto cmd) {
      CLI::App* sub = app.add_subcommand(name, help);
      cmd->setup(*sub);
      cmds.emplace_back(sub, std::move(cmd));
    };
    add("search", "Rank every valid (Gx,Gy,Gz,Gdata) and X/Y/Z order by predicted iteration time",
        ovb::model::cli::make_search());
    add("versus",
        "The best 4D and the best Megatron-LM configuration side by side: which is faster, by how much",
        ovb::model::cli::make_versus());
    add("validate", "Predict published large-scale training runs and compare (analysis/validation)",
        ovb::model::cli::make_validate());
    add("explain", "One configuration term by term", ovb::model::cli::make_explain());
    add("calibrate", "Fit a machine description to ovb-collective/ovb-gemm/ovb-overlap results",
        ovb::model::cli::make_calibrate());
    add("compare", "Predicted vs measured gpt4d configurations", ovb::model::cli::make_compare());
    add("export-chakra",
        "The schedule as Chakra execution traces, one file per rank (for ASTRA-sim)",
        ovb::model::cli::make_export_chakra());
    add("gemm", "GEMMs as the model costs them, whole and in chunks; against measured chunks",
        ovb::model::cli::make_gemm());
    ovb::parse_cli(app, argc, argv, ctx);
    for (auto& [sub, cmd] : cmds)
      if (sub->parsed()) return cmd->run(ctx);
    return 2;
  });
}
