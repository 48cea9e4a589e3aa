// Result files that never replace what is not theirs: the one writer behind every --json/--out
// (atomic_write, write_json and the streaming trace writer). Where a path leads decides how:
//   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: that open descriptor, written at its
//     position and left open ("-" and /dev/stdout: the standard output kept for results, see
//     reserve_stdout_for_results), as the shell and awk treat these names;
//   an existing device, FIFO, or a symbolic link to one (/dev/null, `--json >(jq .)`): written
//     through, opened without O_CREAT or O_TRUNC, never replaced;
//   a symbolic link to a regular file: the file it leads to is replaced atomically, the link kept;
//   anything else: a temporary file created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) in the target's
//     folder as .NAME.tmp.PID.N (N: the first free number from 0), fsynced, renamed over the
//     target; on any failure it is removed and the old target is left as it was.
// A folder, a socket or a symbolic link that leads nowhere is refused with one line naming it.
#pragma once

#include <string>
#include <string_view>

namespace ovb {

class OutputFile {
 public:
  // Opens the output for `path` (creating missing parent folders). Throws UsageError for a target
  // that cannot take a result (folder, socket, dangling link), Error naming the file and the
  // system's reason otherwise.
  explicit OutputFile(std::string path);
  ~OutputFile();  // without commit(): the temporary file is removed, the target left unchanged
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);  // buffered; throws Error
  // Writes what is buffered; a temporary file is then fsynced and renamed over the target.
  void commit();
  const std::string& path() const { return path_; }

 private:
  void flush_buffer();
  std::string path_, final_, tmp_;  // final_: the file renamed over; tmp_: "" when written through
  std::string buffer_;
  int fd_ = -1;
  bool own_fd_ = true, committed_ = false;
};

// Checks before a long run that OutputFile(path) will be able to write there: creates missing
// parent folders and, for a file to be replaced, a temporary file beside it (removed again).
// Throws UsageError naming the path and the system's reason.
void check_writable(const std::string& path);

// True for the names of standard output: "-" and /dev/stdout.
bool is_stdout_name(const std::string& path);

// Keeps standard output for a result written to "-" or /dev/stdout: from now on everything else
// the process writes to stdout (std::cout, printf, Google Benchmark's table) goes to standard
// error, so stdout carries the result alone and stays parseable. parse_cli calls it when an option
// --json or --out names standard output. Throws Error when the descriptors cannot be duplicated.
void reserve_stdout_for_results();

}  // namespace ovb
