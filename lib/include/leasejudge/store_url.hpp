// A store by its URL: the one grammar every door of leasejudge (the command, the bash
// builtin, the C ABI, Go, Python, Node) opens stores with.
//
//   mem:                                         a store in this process, empty
//   file:DIR                                     a directory of files (locks on one machine)
//   nats://[user:pass@]host:port[,host:port...]/BUCKET
//   tls://[user:pass@]host:port[,host:port...]/BUCKET
//                                                a NATS JetStream key/value bucket (tls://
//                                                requires TLS); a user and password apply
//                                                to every server that names none
//   etcd://[user:pass@]host:port[,host:port...]/PREFIX
//                                                an etcd v3 cluster, the keys under
//                                                "PREFIX/" (TLS: https to every member when
//                                                a TLS file is given); user and password are
//                                                etcd's own authentication
//
// Rules:
// - A store that is not there is refused, never made, unless `create` is asked: a
//   file: directory that does not exist (a typo would otherwise give two processes
//   the same lock in two directories), a NATS bucket that does not exist.
// - Any other text is Errc::invalid_argument, saying which form it misses; so is a
//   URL with a NUL byte. A password never appears in a message (shown as ***).
// - A store that cannot be reached or is missing is Errc::store, naming it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "leasejudge/error.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge {

struct StoreUrlOptions {
  bool create = false;  // make a missing file: directory (one level) or NATS bucket
  // NATS: a credentials file and TLS files (as NatsOptions takes them); etcd: the TLS
  // files (as EtcdOptions takes them); ignored by the other stores.
  std::string credentials_file, tls_ca_file, tls_cert_file, tls_key_file;
  bool refuse_unfenced = false;  // NatsOptions::refuse_unfenced
  StoreNote note;                // NatsOptions::note
  // How the caller asks for creation (its flag or option), named where a store that
  // does not exist is refused; empty: "creation".
  std::string create_name;
};

Result<std::unique_ptr<Store>> open_store_url(std::string_view url, const StoreUrlOptions& options = {});

// The URL as messages show it: a user and password replaced by ***.
std::string shown_store_url(std::string_view url);

}  // namespace leasejudge
