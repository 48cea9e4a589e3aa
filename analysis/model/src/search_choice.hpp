// The search's choice of plan variant for one grid and each of its X/Y/Z orders (search.hpp):
// what the user leaves open (micro-batch, sharding) picked by preferred() among plan_variants().
// Internal to the search; the exhaustive path is the reference the pruned one is tested against.
#pragma once

#include <vector>

#include "ovb/model/search.hpp"

namespace ovb::model {

// One Candidate per order, in the order of `orders` (every order of one grid's sizes), chosen
// among `variants` (plan_variants() of a valid plan on that grid). `exhaustive`: replay every
// variant on every order in full with simulate(); otherwise only what can still win is replayed,
// from compiled schedules (search_choice.cpp), with the same result.
std::vector<Candidate> choose_per_order(const GptShape& m,
                                        const std::vector<GptPlanOptions>& variants,
                                        const std::vector<GridShape>& orders, const Machine& mc,
                                        double memory_limit_bytes, bool exhaustive);

}  // namespace ovb::model
