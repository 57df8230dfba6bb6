// Reading the FILE a verb plans a piece ahead: while the caller plans one piece, a thread
// of its own reads the next, so that copying the file from the page cache runs beside
// the plan rather than between its pieces (the plan's threads then wait on no read).
//
// Only a regular file is read ahead: its reads end. A pipe, a terminal or a socket may
// block for ever, and a thread blocked in read could not be stopped, so anything else is
// read in the caller's thread, a piece at each call, as it comes (an interrupted read
// is the caller's to retry). So is a regular file when no thread can be had. The reading
// thread takes no signal: they stay the caller's.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace leasejudge::cli {

class ReadAhead {
 public:
  // Reads fd (not taken: the caller closes it once this is gone) piece bytes at most at
  // a time.
  ReadAhead(int fd, std::size_t piece);
  // Waits for the read under way, if any (a regular file's: it ends).
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next piece of the file: the count of its bytes at *data (valid until the next
  // call), 0 at the file's end, or -1 with errno set as read(2) sets it. After 0 or -1
  // from a file read ahead, every call gives the same again.
  ssize_t next(const char** data);

  bool ahead() const noexcept { return thread_.joinable(); }  // a thread reads

 private:
  struct Piece {
    ssize_t got = 0;
    int error = 0;
    int buffer = 0;
  };
  void serve();

  int fd_;
  std::size_t piece_;
  std::unique_ptr<char[]> buffers_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> free_;      // buffers the thread may fill
  std::deque<Piece> ready_;   // pieces read, in order, not yet taken
  int held_ = -1;             // the buffer the caller holds
  std::optional<Piece> end_;  // the piece of the file's end or of a failed read: it stays
  bool quit_ = false;
  std::thread thread_;  // last: started once the rest is made
};

}  // namespace leasejudge::cli
