#include "read_ahead.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace leasejudge::cli {

ReadAhead::ReadAhead(int fd, std::size_t piece) : fd_(fd), piece_(piece) {
  buffers_[0].reset(new char[piece_]);
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;
  buffers_[1].reset(new char[piece_]);
  free_ = {0, 1};
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  try {
    thread_ = std::thread([this] { serve(); });
  } catch (const std::system_error&) {
    free_.clear();  // no thread: read in the caller's
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

ReadAhead::~ReadAhead() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ReadAhead::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return quit_ || !free_.empty(); });
    if (quit_) return;
    Piece p;
    p.buffer = free_.front();
    free_.pop_front();
    lock.unlock();
    do {
      p.got = ::read(fd_, buffers_[p.buffer].get(), piece_);
    } while (p.got < 0 && errno == EINTR);
    p.error = p.got < 0 ? errno : 0;
    lock.lock();
    ready_.push_back(p);
    changed_.notify_all();
    if (p.got <= 0) return;
  }
}

ssize_t ReadAhead::next(const char** data) {
  *data = nullptr;
  if (!thread_.joinable()) {
    ssize_t got = ::read(fd_, buffers_[0].get(), piece_);
    if (got > 0) *data = buffers_[0].get();
    return got;
  }
  Piece p;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (held_ >= 0) {
      free_.push_back(held_);
      held_ = -1;
      changed_.notify_all();
    }
    if (end_) {
      p = *end_;
    } else {
      changed_.wait(lock, [this] { return !ready_.empty(); });
      p = ready_.front();
      ready_.pop_front();
      if (p.got <= 0)
        end_ = p;
      else
        held_ = p.buffer;
    }
  }
  if (p.got < 0) errno = p.error;
  if (p.got > 0) *data = buffers_[p.buffer].get();
  return p.got;
}

}  // namespace leasejudge::cli
