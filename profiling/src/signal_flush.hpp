// Writes the trace when the process is told to stop (SIGTERM from Slurm at the time limit or on
// scancel, SIGINT from Ctrl-C), then lets the signal do what it would have done.
//
// The handler itself only writes the signal number to a pipe (async-signal-safe); a watcher thread
// runs the flush-and-write callback, restores the previous disposition of the signal and raises it
// again - so a program's own handler still runs, and the default action still ends the process.
#pragma once

#include <functional>

namespace ovb::trace {

// Installs the handlers once per process; a later call replaces the callback. The callback runs on
// the watcher thread at most once per signal and must not throw.
void on_termination_signal(std::function<void(int signo)> callback);

// Removes the callback (the handlers stay, and only re-raise).
void clear_termination_callback();

}  // namespace ovb::trace
