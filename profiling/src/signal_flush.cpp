// SIGTERM / SIGINT: flush and write the trace from a watcher thread, then re-raise (see
// signal_flush.hpp).
#include "signal_flush.hpp"

#include <unistd.h>

#include <csignal>
#include <mutex>
#include <thread>

namespace ovb::trace {

namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT};

std::mutex g_mu;
std::function<void(int)> g_callback;
int g_pipe[2] = {-1, -1};
struct sigaction g_previous[2];

void handler(int signo) {
  const unsigned char b = static_cast<unsigned char>(signo);
  // Nothing else here: only async-signal-safe calls. A full pipe means a write is already pending.
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &b, 1);
}

void watcher() {
  unsigned char b = 0;
  while (::read(g_pipe[0], &b, 1) == 1) {
    const int signo = b;
    std::function<void(int)> cb;
    {
      std::lock_guard lock(g_mu);
      cb = g_callback;
    }
    if (cb) cb(signo);
    for (int i = 0; i < 2; ++i)
      if (kSignals[i] == signo) sigaction(signo, &g_previous[i], nullptr);
    // Delivered to the process: the previous handler, or the default action, takes over.
    ::kill(::getpid(), signo);
  }
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe(g_pipe) != 0) return;
    std::thread(watcher).detach();
    for (int i = 0; i < 2; ++i) {
      struct sigaction sa {};
      sa.sa_handler = handler;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      sigaction(kSignals[i], &sa, &g_previous[i]);
      // A process that ignores the signal (e.g. nohup) keeps ignoring it.
      if (g_previous[i].sa_handler == SIG_IGN) sigaction(kSignals[i], &g_previous[i], nullptr);
    }
  });
}

}  // namespace

void on_termination_signal(std::function<void(int signo)> callback) {
  install_once();
  std::lock_guard lock(g_mu);
  g_callback = std::move(callback);
}

void clear_termination_callback() {
  std::lock_guard lock(g_mu);
  g_callback = nullptr;
}

}  // namespace ovb::trace
