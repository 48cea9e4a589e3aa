// The links shared by collectives in flight at the same time (see link_share.hpp): the link and
// share of each collective, and the fluid replay of the communication streams, one event (a start,
// the end of a latency term, an end) at a time.
#include "ovb/model/link_share.hpp"

#include <algorithm>
#include <limits>

#include "ovb/error.hpp"

namespace ovb::model {

LinkUse link_use(const Machine& m, const CollCost& c) {
  LinkUse u;
  u.us = c.time_us;
  u.latency_us = std::clamp(c.alpha_us, 0.0, c.time_us);
  if (c.placement == Placement::inter) {
    u.link = Link::nic;  // the node's bandwidth, all of it (see the header)
    return u;
  }
  u.link = Link::nvlink;
  // The rank's NVLink: the most a node-wide group of this kind gets, or this group's own rate
  // where the table gives a smaller group more.
  const double node = link_params(m, c.kind, m.ranks_per_node(), 1).bw_gbps;
  u.share = c.bw_gbps > 0 && c.bw_gbps < node ? c.bw_gbps / node : 1.0;
  return u;
}

void LinkShare::clear() {
  flows_.clear();
  deps_.clear();
  for (auto& q : queue_) q.clear();
  head_.fill(0);
  now_ = 0;
  planned_ = false;
}

void LinkShare::add(int stream, double ready, const std::vector<int>& deps, const LinkUse& use,
                    double stretch) {
  if (ready < now_)  // the replay's contract: nothing is added into the links' past
    throw Error("ovb-model: a collective was issued at " + std::to_string(ready) +
                " us, before the links' replay at " + std::to_string(now_) + " us");
  Flow f;
  f.ready = ready;
  f.duration = use.us * stretch;
  f.latency_left = use.latency_us * stretch;
  f.work_left = std::max(0.0, f.duration - f.latency_left);
  f.share = use.share;
  f.link = use.link;
  f.deps_begin = static_cast<int>(deps_.size());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  f.deps_end = static_cast<int>(deps_.size());
  queue_[static_cast<std::size_t>(stream)].push_back(static_cast<int>(flows_.size()));
  flows_.push_back(f);
  planned_ = false;
}

bool LinkShare::startable(const Flow& f) const {
  for (int i = f.deps_begin; i < f.deps_end; ++i)
    if (flows_[static_cast<std::size_t>(deps_[static_cast<std::size_t>(i)])].end < 0) return false;
  return true;  // the stream's previous collective has ended: f is at the queue's head
}

// Max-min fair shares of each link among the bandwidth terms on it: while those left ask for more
// than an equal split of what is left, the smallest is served in full.
void LinkShare::set_rates() {
  std::array<std::array<Flow*, kStreams>, 2> on{};  // by Link
  std::array<std::size_t, 2> n{};
  std::array<double, 2> asked{};
  for (std::size_t s = 0; s < kStreams; ++s) {
    if (head_[s] >= queue_[s].size()) continue;
    Flow& f = flows_[static_cast<std::size_t>(queue_[s][head_[s]])];
    if (f.start < 0 || f.latency_left > 0) continue;
    const auto l = static_cast<std::size_t>(f.link);
    on[l][n[l]++] = &f;
    asked[l] += f.share;
    f.rate = 1;
  }
  for (std::size_t l = 0; l < 2; ++l) {
    if (asked[l] <= 1) continue;  // room for all: each at its own rate
    auto* first = on[l].data();
    for (std::size_t i = 1; i < n[l]; ++i)  // by share (at most one per stream)
      for (std::size_t j = i; j > 0 && first[j]->share < first[j - 1]->share; --j)
        std::swap(first[j], first[j - 1]);
    double left = 1;
    for (std::size_t i = 0; i < n[l]; ++i) {
      const double fair = left / static_cast<double>(n[l] - i);
      Flow& f = *first[i];
      f.rate = f.share <= fair ? 1.0 : fair / f.share;
      left -= f.share * f.rate;
    }
  }
}

// When the in-flight f next changes state. Alone all along, it ends at start + duration exactly.
double LinkShare::event_at(const Flow& f) const {
  if (f.latency_left > 0) return now_ + f.latency_left;
  if (!f.shared && f.rate >= 1) return std::max(now_, f.start + f.duration);
  return now_ + f.work_left / f.rate;
}

// Rates and each stream head's next event, recomputed only after something changed.
void LinkShare::plan() {
  set_rates();
  next_ = kNever;
  for (std::size_t s = 0; s < kStreams; ++s) {
    at_[s] = kNever;
    if (head_[s] >= queue_[s].size()) continue;
    const Flow& f = flows_[static_cast<std::size_t>(queue_[s][head_[s]])];
    if (f.start >= 0)
      next_ = std::min(next_, at_[s] = event_at(f));
    else if (startable(f))
      next_ = std::min(next_, std::max(f.ready, now_));
  }
  planned_ = true;
}

bool LinkShare::step(double limit) {
  if (!planned_) plan();
  const double next = next_;
  const auto& at = at_;
  if (!(next <= limit)) return false;  // none, or later
  planned_ = false;
  const double dt = next - now_;
  for (std::size_t s = 0; s < kStreams; ++s) {
    if (at[s] == kNever) continue;
    Flow& f = flows_[static_cast<std::size_t>(queue_[s][head_[s]])];
    const bool here = at[s] == next;
    if (f.latency_left > 0) {
      f.latency_left = here ? 0 : f.latency_left - dt;
      continue;
    }
    if (dt > 0 && f.rate < 1) f.shared = true;
    if (!here) {
      f.work_left -= dt * f.rate;
      continue;
    }
    f.work_left = 0;
    f.end = next;
    ++head_[s];
  }
  now_ = next;
  for (std::size_t s = 0; s < kStreams; ++s) {  // after every end at this time
    if (head_[s] >= queue_[s].size()) continue;
    Flow& f = flows_[static_cast<std::size_t>(queue_[s][head_[s]])];
    if (f.start < 0 && f.ready <= now_ && startable(f)) f.start = now_;
  }
  return true;
}

void LinkShare::run_through(double t) {
  while (step(t)) {
  }
}

double LinkShare::end(int id) {
  const Flow& f = flows_.at(static_cast<std::size_t>(id));
  while (f.end < 0)
    if (!step(std::numeric_limits<double>::infinity()))
      throw Error("ovb-model: collective " + std::to_string(id) +
                  " of the replay can never start (a dependency was never issued)");
  return f.end;
}

double LinkShare::ran_before(int id, double t) const {
  const Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.start < 0 || f.start >= t) return 0;
  return std::min(f.end < 0 ? t : f.end, t) - f.start;
}

}  // namespace ovb::model
