package leasejudge

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// natsServer starts `nats-server -js` (LEASEJUDGE_NATS_SERVER, else the one on PATH
// or in /usr/sbin) on a free loopback port with its own store directory, stopped
// when the test ends; the test is skipped, saying so, where nats-server is not
// installed, and fails there under CI=true.
func natsServer(t *testing.T) string {
	path := os.Getenv("LEASEJUDGE_NATS_SERVER")
	if path == "" {
		var err error
		if path, err = exec.LookPath("nats-server"); err != nil {
			path = "/usr/sbin/nats-server"
		}
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nats-server is not installed (%s): under CI=true the NATS store must be tested", path)
		}
		t.Skip("nats-server is not installed: the NATS store is not tested here")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(path, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nats-server did not listen")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "nats://" + addr
}

func TestNATSStore(t *testing.T) {
	url := natsServer(t)
	if _, err := OpenNATSStore(NATSOptions{URLs: url, Bucket: "steps"}); !errors.Is(err, ErrStore) {
		t.Fatalf("a missing bucket: %v", err)
	}
	if _, err := OpenNATSStore(NATSOptions{URLs: url}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no bucket: %v", err)
	}
	if _, err := OpenNATSStore(NATSOptions{URLs: url, Bucket: "b", CreateBucket: true, History: 1 << 40}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a history out of range: %v", err)
	}
	s, err := OpenNATSStore(NATSOptions{URLs: url, Bucket: "steps", CreateBucket: true, Name: "leasejudge-go-test"})
	must(t, err)
	defer s.Close()
	exerciseStore(t, s, false)
	if _, err := s.Create("a..b", []byte("x")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a key NATS refuses: %v", err)
	}

	// A sweep on it, and a lock.
	fillState(t, func(k, v string) {
		if _, err := s.Create(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	})
	var log logBook
	report, err := EndStaleWith(ScanOfStore(s), node, at0(t, before0), log.logf, sweepOpts(t))
	must(t, err)
	checkSwept(t, func(k string) (string, bool) {
		v, _, err := s.Get(k)
		return string(v), err == nil && v != nil
	}, report, log.all())
	lock, acq, err := AcquireLock(s, "locks.state", "deploy", nil, time.Time{}, nil)
	if err != nil || acq.Outcome != Acquired {
		t.Fatalf("AcquireLock on NATS: %+v %v", acq, err)
	}
	must(t, lock.Renew(time.Time{}))
	must(t, lock.Release())
	lock.Close()

	// No server there: ErrStore, quickly.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := OpenNATSStore(NATSOptions{URLs: "nats://127.0.0.1:" + strconv.Itoa(port), Bucket: "steps",
		ConnectTimeout: 500 * time.Millisecond}); !errors.Is(err, ErrStore) {
		t.Fatalf("no server: %v", err)
	}
}
