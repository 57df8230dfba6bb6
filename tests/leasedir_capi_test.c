/* The C ABI of the lease directory, from C: every entry point with good and bad input
 * (NULL, empty, embedded NUL, non-UTF-8, huge), callbacks that stop, versions. TAP-style
 * output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "dead_pid.h"


static char scratch[] = "/tmp/leasedir-capi.XXXXXX";

/* What a verb printed, line by line. */
struct lines {
  char out[8192];
  char err[8192];
  int n_out, n_err;
  int stop_after; /* stop (non-zero return) at this line; 0: never */
};

static int collect(int stream, const char *line, size_t len, void *payload) {
  struct lines *l = (struct lines *)payload;
  char *buf = stream == LJ_LEASEDIR_STDOUT ? l->out : l->err;
  size_t used = strlen(buf);
  if (line[len] != '\0') return 1; /* the line is NUL-terminated too */
  if (used + len + 2 < sizeof l->out) {
    memcpy(buf + used, line, len);
    buf[used + len] = '\n';
    buf[used + len + 1] = '\0';
  }
  if (stream == LJ_LEASEDIR_STDOUT) l->n_out++; else l->n_err++;
  return l->stop_after > 0 && l->n_out + l->n_err >= l->stop_after;
}

static int always(void *payload) {
  int *calls = (int *)payload;
  ++*calls;
  return 1;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return;
  fputs(text, f);
  fclose(f);
}

static int read_file(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  size_t n;
  if (f == NULL) return -1;
  n = fread(buf, 1, cap - 1, f);
  buf[n] = '\0';
  fclose(f);
  return (int)n;
}

static void test_options(void) {
  lj_leasedir_options_t opts;
  lj_leasedir_options_t init = LJ_LEASEDIR_OPTIONS_INIT;
  lj_error_t *err = NULL;
  int code = -1;
  CHECK(lj_leasedir_options_init(NULL, LJ_LEASEDIR_OPTIONS_VERSION) == LJ_EINVAL);
  CHECK(lj_leasedir_options_init(&opts, 99) == LJ_EVERSION);
  CHECK(lj_leasedir_options_init(&opts, LJ_LEASEDIR_OPTIONS_VERSION) == LJ_OK);
  CHECK(opts.version == LJ_LEASEDIR_OPTIONS_VERSION && opts.lock_tries == -1 && opts.lock_time_limit_s == 30 &&
        opts.lock_retry_ms == 100 && opts.shared_harness == NULL && opts.self_pid == 0 && opts.environment == NULL &&
        opts.interrupted == NULL);
  CHECK(init.version == opts.version && init.lock_tries == opts.lock_tries &&
        init.lock_time_limit_s == opts.lock_time_limit_s && init.lock_retry_ms == opts.lock_retry_ms);

  opts.version = 0;
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, NULL, NULL, &opts, &err) == LJ_EVERSION);
  CHECK(lj_error_code(err) == LJ_EVERSION);
  lj_error_destroy(err);
  err = NULL;
  lj_leasedir_options_init(&opts, LJ_LEASEDIR_OPTIONS_VERSION);
  opts.lock_tries = -2;
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, NULL, NULL, &opts, NULL) == LJ_EINVAL);
  lj_leasedir_options_init(&opts, LJ_LEASEDIR_OPTIONS_VERSION);
  opts.lock_retry_ms = 70000;
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, NULL, NULL, &opts, NULL) == LJ_EINVAL);
  lj_leasedir_options_init(&opts, LJ_LEASEDIR_OPTIONS_VERSION);
  opts.lock_time_limit_s = -1;
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, NULL, NULL, &opts, NULL) == LJ_EINVAL);
  lj_leasedir_options_init(&opts, LJ_LEASEDIR_OPTIONS_VERSION);
  opts.self_pid = -1;
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, NULL, NULL, &opts, NULL) == LJ_EINVAL);
}

static void test_run(void) {
  struct lines l;
  const char *help[] = {"--help"};
  const char *bogus[] = {"bogus"};
  const char *badarg[] = {"list", "--zz"};
  const char *with_null[] = {"list", NULL};
  char notgit[256];
  const char *touch_notgit[] = {"touch", "--root", NULL, "--pid", "5"};
  lj_error_t *err = NULL;
  int code = -1;

  CHECK(lj_leasedir_run(NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, &err) == LJ_EINVAL);
  CHECK(strcmp(lj_error_message(err), "exit_code is NULL") == 0);
  lj_error_destroy(err);
  CHECK(lj_leasedir_run(&code, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_run(&code, with_null, 2, NULL, NULL, NULL, NULL, NULL, NULL) == LJ_EINVAL);

  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_run(&code, NULL, 0, NULL, NULL, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && l.n_out > 5 && l.n_err == 0);
  CHECK(strstr(l.out, "leasejudge lease touch") != NULL);
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_run(&code, help, 1, NULL, NULL, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && l.n_out > 5);
  memset(&l, 0, sizeof l);
  l.stop_after = 2;
  CHECK(lj_leasedir_run(&code, help, 1, NULL, NULL, collect, &l, NULL, NULL) == LJ_EUSER);
  CHECK(l.n_out == 2);
  CHECK(lj_leasedir_run(&code, help, 1, NULL, NULL, NULL, NULL, NULL, NULL) == LJ_OK); /* no callback */

  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_run(&code, bogus, 1, NULL, NULL, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 2 && strcmp(l.err, "gstack-lease: unknown verb 'bogus'\n") == 0);
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_run(&code, badarg, 2, NULL, NULL, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 2 && strcmp(l.err, "gstack-lease: unknown argument '--zz'\n") == 0);

  snprintf(notgit, sizeof notgit, "%s/none", scratch);
  touch_notgit[2] = notgit;
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_run(&code, touch_notgit, 5, NULL, NULL, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 2);
  CHECK(strncmp(l.err, "gstack-lease: ", 14) == 0 && strstr(l.err, "/none is not a git checkout\n") != NULL);
}

static void test_path(void) {
  char *out = (char *)1;
  size_t len = 7;
  char root[512], cmd[1024], expected[600];
  lj_error_t *err = NULL;
  CHECK(lj_leasedir_path(NULL, NULL, "x", 1, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_path(&out, &len, NULL, 0, NULL, NULL) == LJ_EINVAL);
  CHECK(out == NULL && len == 0);
  CHECK(lj_leasedir_path(&out, &len, NULL, 3, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_path(&out, &len, "a\0b", 3, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_path(&out, &len, scratch, strlen(scratch), NULL, &err) == LJ_ENOTFOUND);
  CHECK(lj_error_code(err) == LJ_ENOTFOUND && strstr(lj_error_message(err), "is not a git checkout") != NULL);
  lj_error_destroy(err);
  snprintf(root, sizeof root, "%s/repo", scratch);
  snprintf(cmd, sizeof cmd, "git init -q '%s' >/dev/null 2>&1", root);
  CHECK(system(cmd) == 0);
  CHECK(lj_leasedir_path(&out, &len, root, strlen(root), NULL, NULL) == LJ_OK);
  snprintf(expected, sizeof expected, "%s/.git/gstack-leases", root);
  CHECK(out != NULL && strcmp(out, expected) == 0 && len == strlen(expected));
  lj_free(out);
  {
    /* root given with its length: the bytes after it are not read */
    char padded[600];
    snprintf(padded, sizeof padded, "%sXYZ", root);
    CHECK(lj_leasedir_path(&out, &len, padded, strlen(root), NULL, NULL) == LJ_OK);
    CHECK(out != NULL && strcmp(out, expected) == 0);
    lj_free(out);
  }
  {
    const char *env[] = {"PATH=/usr/bin:/bin", "GSTACK_LEASE_DIR=/somewhere/else", NULL};
    lj_leasedir_options_t opts = LJ_LEASEDIR_OPTIONS_INIT;
    opts.environment = env;
    CHECK(lj_leasedir_path(&out, &len, root, strlen(root), &opts, NULL) == LJ_OK);
    CHECK(out != NULL && strcmp(out, "/somewhere/else") == 0);
    lj_free(out);
    CHECK(lj_leasedir_path(&out, &len, scratch, strlen(scratch), &opts, NULL) == LJ_ENOTFOUND);
  }
}

static void test_verbs(void) {
  char dir[256], file[600], content[512], expected[600], pid[32], *identity = NULL;
  struct lines l;
  lj_error_t *err = NULL;
  int code = -1;
  pid_t dead = dead_pid();
  char dead_text[32];
  size_t idlen = 0;
  static char huge[301]; /* longer than any file name */

  snprintf(dir, sizeof dir, "%s/leases", scratch);
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  snprintf(dead_text, sizeof dead_text, "%ld", (long)dead);
  CHECK(lj_lease_identity(&identity, &idlen, 0, NULL) == LJ_OK);

  /* bad input */
  CHECK(lj_leasedir_touch(NULL, dir, strlen(dir), pid, strlen(pid), NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_touch(&code, NULL, 0, pid, strlen(pid), NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_touch(&code, dir, 0, pid, strlen(pid), NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), NULL, 0, NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), "1\0002", 3, NULL, NULL, NULL, &err) == LJ_EINVAL);
  CHECK(strcmp(lj_error_message(err), "pid is NULL, empty or holds a NUL") == 0);
  lj_error_destroy(err);
  CHECK(lj_leasedir_list(NULL, dir, strlen(dir), NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_list(&code, NULL, 5, NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_live(NULL, dir, strlen(dir), NULL, 0, 0, NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_live(&code, dir, strlen(dir), NULL, 4, 0, NULL, NULL, NULL, NULL) == LJ_EINVAL);
  CHECK(lj_leasedir_live(&code, "", 0, NULL, 0, 0, NULL, NULL, NULL, NULL) == LJ_EINVAL);

  /* touch writes the identity line, list and live read it */
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), pid, strlen(pid), collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && l.n_err == 0);
  snprintf(file, sizeof file, "%s/%s", dir, pid);
  CHECK(read_file(file, content, sizeof content) > 0);
  snprintf(expected, sizeof expected, "%s\n", identity);
  CHECK(strcmp(content, expected) == 0);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), dead_text, strlen(dead_text), NULL, NULL, NULL, NULL) == LJ_OK);
  snprintf(file, sizeof file, "%s/%s", dir, dead_text);
  CHECK(read_file(file, content, sizeof content) == 0); /* no identity: an empty lease */
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), "\xff\xfe", 2, NULL, NULL, NULL, NULL) == LJ_OK);
  CHECK(code == 0);

  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_list(&code, dir, strlen(dir), collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && l.n_out == 3);
  snprintf(expected, sizeof expected, "%s 0m alive\n", pid);
  CHECK(strstr(l.out, expected) != NULL);
  snprintf(expected, sizeof expected, "%s 0m dead\n", dead_text);
  CHECK(strstr(l.out, expected) != NULL);
  CHECK(strstr(l.out, "\xff\xfe 0m dead\n") != NULL);

  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_live(&code, dir, strlen(dir), NULL, 0, 0, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 0 && l.n_out == 1);
  snprintf(expected, sizeof expected, "%s 0m leasedir_capi_", pid); /* the command, 15 bytes at most */
  CHECK(strncmp(l.out, expected, strlen(expected)) == 0);
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_live(&code, dir, strlen(dir), pid, strlen(pid), 0, collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 1 && l.n_out == 0);
  memset(&l, 0, sizeof l);
  l.stop_after = 1;
  CHECK(lj_leasedir_list(&code, dir, strlen(dir), collect, &l, NULL, NULL) == LJ_EUSER);

  /* a name too long for a file: touch's message and exit 2 */
  memset(huge, '7', sizeof huge - 1);
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), huge, strlen(huge), collect, &l, NULL, NULL) == LJ_OK);
  CHECK(code == 2 && l.n_err == 1 && strstr(l.err, "File name too long") != NULL);

  /* state */
  {
    lj_lease_state_t state = LJ_LEASE_DEAD;
    char stale[128];
    CHECK(lj_leasedir_state(NULL, pid, strlen(pid), identity, idlen, 0, NULL, NULL) == LJ_EINVAL);
    CHECK(lj_leasedir_state(&state, NULL, 0, identity, idlen, 0, NULL, NULL) == LJ_EINVAL);
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), NULL, 3, 0, NULL, NULL) == LJ_EINVAL);
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), identity, idlen, 0, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_ALIVE);
    CHECK(lj_leasedir_state(&state, dead_text, strlen(dead_text), identity, idlen, 0, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_DEAD);
    snprintf(stale, sizeof stale, "%.43s1", identity); /* "linux <boot id> 1" */
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), stale, strlen(stale), 0, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_STALE);
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), NULL, 0, 119, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_ALIVE);
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), NULL, 0, 120, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_STALE);
    CHECK(lj_leasedir_state(&state, pid, strlen(pid), "\xff garbage", 9, 500, NULL, NULL) == LJ_OK);
    CHECK(state == LJ_LEASE_ALIVE);
  }
  lj_free(identity);
}

static void test_lock_wait(void) {
  char dir[256], lockdir[300], owner[320], token[256], *identity = NULL;
  lj_leasedir_options_t opts = LJ_LEASEDIR_OPTIONS_INIT;
  struct lines l;
  int code = -1, calls = 0;
  pid_t parent = getppid();

  snprintf(dir, sizeof dir, "%s/locked", scratch);
  snprintf(lockdir, sizeof lockdir, "%s/.lock", dir);
  snprintf(owner, sizeof owner, "%s/owner", lockdir);
  mkdir(dir, 0777);
  mkdir(lockdir, 0777);
  CHECK(lj_lease_identity(&identity, NULL, parent, NULL) == LJ_OK);
  snprintf(token, sizeof token, "%ld %s\n", (long)parent, identity);
  write_file(owner, token);

  /* a live holder: the tries run out, exit 3 naming it */
  opts.lock_tries = 2;
  opts.lock_retry_ms = 1;
  memset(&l, 0, sizeof l);
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), "5", 1, collect, &l, &opts, NULL) == LJ_OK);
  CHECK(code == 3);
  snprintf(token, sizeof token, "gstack-lease: the lease directory is locked by live process %ld; lease 5 not renewed\n",
           (long)parent);
  CHECK(strcmp(l.err, token) == 0);
  /* interrupted while waiting: LJ_EUSER at once */
  opts.lock_tries = 1000000;
  opts.interrupted = always;
  opts.interrupted_payload = &calls;
  CHECK(lj_leasedir_touch(&code, dir, strlen(dir), "5", 1, NULL, NULL, &opts, NULL) == LJ_EUSER);
  CHECK(calls == 1);
  lj_free(identity);
}

int main(void) {
  char cmd[300];
  if (mkdtemp(scratch) == NULL) return 1;
  test_options();
  test_run();
  test_path();
  test_verbs();
  test_lock_wait();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  if (system(cmd) != 0) printf("# could not remove %s\n", scratch);
  return CHECK_SUMMARY();
}
