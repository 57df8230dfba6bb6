package leasejudge

import (
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The etcd tests run in a ctest of their own (go_test_etcd, label etcd), which sets
// LEASEJUDGE_GO_ETCD; the whole package's run (go_test) leaves them to it.
func needEtcdRun(t *testing.T) {
	if os.Getenv("LEASEJUDGE_GO_ETCD") == "" {
		t.Skip("the etcd tests run with LEASEJUDGE_GO_ETCD=1 (ctest -L etcd)")
	}
}

// etcdServer starts one etcd member (LEASEJUDGE_ETCD, else the one on PATH) on free
// loopback ports with its own data directory, stopped when the test ends, and
// returns its host:port; the test is skipped, saying so, where etcd is not
// installed, and fails there under CI=true.
func etcdServer(t *testing.T) string {
	needEtcdRun(t)
	path := os.Getenv("LEASEJUDGE_ETCD")
	if path == "" {
		var err error
		if path, err = exec.LookPath("etcd"); err != nil {
			path = "/usr/bin/etcd"
		}
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("etcd is not installed (%s): under CI=true the etcd store must be tested", path)
		}
		t.Skip("etcd is not installed: the etcd store is not tested here")
	}
	client, peer := freePort(t), freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(path, "--name", "m0", "--data-dir", filepath.Join(dir, "m0"),
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "m0=http://"+peer, "--initial-cluster-state", "new")
	cmd.Env = withoutPreload(os.Environ()) // etcd is no program of ours
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		r, err := http.Post("http://"+client+"/v3/kv/range", "application/json", strings.NewReader(`{"key":"cHJvYmU="}`))
		if err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("etcd did not answer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return client
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func withoutPreload(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "LD_PRELOAD=") {
			out = append(out, e)
		}
	}
	return out
}

func TestEtcdLock(t *testing.T) {
	endpoint := etcdServer(t)
	s, err := OpenStore("etcd://"+endpoint+"/go-doors", StoreURLOptions{})
	must(t, err)
	defer s.Close()
	lock, acq, err := AcquireLock(s, "locks/deploy", "deploy", nil, time.Time{}, nil)
	if err != nil || acq.Outcome != Acquired {
		t.Fatalf("AcquireLock on etcd: %+v %v", acq, err)
	}
	defer lock.Close()
	body, rev, err := s.Get("locks/deploy")
	must(t, err)
	if rev == 0 || rev != lock.Revision() {
		t.Fatalf("the body's revision %d, the lock's %d", rev, lock.Revision())
	}
	// Ours: this process is alive and its lease has ten minutes to run.
	v, err := JudgeLock(body, time.Time{}, nil)
	must(t, err)
	if v.Kind.String() != "held" || v.Reason.String() != "lease_runs" || v.ManualRemoval {
		t.Fatalf("the verdict on our own lock: %+v", v)
	}
	if _, again, err := AcquireLock(s, "locks/deploy", "deploy", nil, time.Time{}, nil); err != nil ||
		again.Outcome != AcquireHeld || again.Verdict == nil || again.Verdict.Reason.String() != "lease_runs" {
		t.Fatalf("a second acquisition: %+v %v", again, err)
	}
	must(t, lock.Release())
	if value, _, err := s.Get("locks/deploy"); err != nil || value != nil {
		t.Fatalf("after release: %q %v", value, err)
	}
}

func TestEtcdBadURLs(t *testing.T) {
	endpoint := etcdServer(t)
	for _, url := range []string{"etcd://" + endpoint, "etcd://" + endpoint + "/", "etcd://127.0.0.1:99999/p",
		"etcd://127.0.0.1:abc/p", "etcd:///p", "etcd://:2379/p"} {
		s, err := OpenStore(url, StoreURLOptions{})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not etcd://[user:pass@]host:port[,host:port...]/PREFIX") {
			t.Errorf("%s: %v", url, err)
		}
		if s != nil {
			s.Close()
		}
	}
}
