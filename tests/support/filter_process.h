// A child process used as a filter, as pipelines run `planb enrich`: lines written to its standard input one at a
// time, its output read line by line with a deadline, then its input closed and its exit status taken.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace planb::testing {

class FilterProcess {
 public:
  // Starts `binary` with `args` (argv[1...]); its stderr goes to a file read by err().
  FilterProcess(const std::string& binary, const std::vector<std::string>& args);
  ~FilterProcess();  // kills the child if it still runs
  FilterProcess(const FilterProcess&) = delete;
  FilterProcess& operator=(const FilterProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // Writes `text` to the child's standard input; false when it could not.
  bool Write(const std::string& text);
  // The next line of the child's output (without '\n'); false at its end or after `deadline` (scaled by
  // TestTimeScale()).
  bool ReadLine(std::string* line, std::chrono::milliseconds deadline = std::chrono::seconds(30));
  // Closes the child's input and waits for it: its exit status, -1 when it did not exit normally.
  int Finish();
  std::string err() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1;   // the child's stdin
  int out_ = -1;  // the child's stdout
  std::string err_path_;
  std::string pending_;  // read but not yet returned
};

}  // namespace planb::testing
