/* The C ABI's step lines, from C: lines planned fed in pieces, from a file descriptor,
 * over threads, and an answer longer than its input.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leasejudge.h"
#include "check.h"
#include "step_capi.h"

/* The answer line of a line that is no entry. */
#define MALFORMED(key, what) \
  "{\"key\":" key ",\"action\":\"leave\",\"reason\":\"malformed\",\"why\":\"" what "\",\"malformed\":\"" what "\"}\n"

/* The answers a plan fed in pieces hands out, gathered. */
struct answers {
  char text[4096];
  size_t len, calls, stop_after;
};

static int gather(const char *data, size_t len, void *payload) {
  struct answers *a = (struct answers *)payload;
  if (a->stop_after != 0 && a->calls == a->stop_after) return 1;
  a->calls++;
  if (a->len + len >= sizeof a->text) return 1;
  memcpy(a->text + a->len, data, len);
  a->len += len;
  a->text[a->len] = '\0';
  return 0;
}

/* The same lines fed in pieces of every size from one byte. */
static void test_lines_fed(const char *input, const char *expected, const lj_step_plan_options_t *o) {
  size_t piece, at, n = strlen(input);
  lj_step_lines_plan_t *plan = NULL;
  lj_step_plan_summary_t sum;
  lj_error_t *err = NULL;
  struct answers a;
  for (piece = 1; piece <= n + 1; piece += piece < 8 ? 1 : 97) {
    memset(&a, 0, sizeof a);
    CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
    for (at = 0; at < n; at += piece)
      CHECK(lj_step_lines_plan_feed(plan, input + at, n - at < piece ? n - at : piece, gather, &a, &err) == LJ_OK);
    CHECK(lj_step_lines_plan_feed(plan, NULL, 0, gather, &a, &err) == LJ_OK);
    memset(&sum, 0xff, sizeof sum);
    CHECK(lj_step_lines_plan_finish(&sum, plan, gather, &a, &err) == LJ_OK);
    CHECK(strcmp(a.text, expected) == 0);
    CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
          sum.malformed == 4);
    lj_step_lines_plan_destroy(plan);
  }
  /* A write that asks to stop: LJ_EUSER, and nothing more is handed out. */
  memset(&a, 0, sizeof a);
  a.stop_after = 1;
  CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
  CHECK(lj_step_lines_plan_feed(plan, input, 100, gather, &a, &err) == LJ_OK);
  CHECK(expect_error(lj_step_lines_plan_feed(plan, input + 100, n - 100, gather, &a, &err), LJ_EUSER, &err,
                     "the write callback asked to stop the plan"));
  CHECK(a.calls == 1);
  lj_step_lines_plan_destroy(plan);
  /* Bad arguments. */
  plan = (lj_step_lines_plan_t *)&a;
  CHECK(expect_error(lj_step_lines_plan_create(&plan, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(plan == NULL);
  CHECK(expect_error(lj_step_lines_plan_create(NULL, o, &err), LJ_EINVAL, &err, NULL));
  CHECK(lj_step_lines_plan_create(&plan, o, &err) == LJ_OK);
  CHECK(expect_error(lj_step_lines_plan_feed(NULL, input, n, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_feed(plan, input, n, NULL, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_feed(plan, NULL, 3, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_finish(&sum, NULL, gather, &a, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_lines_plan_finish(&sum, plan, NULL, &a, &err), LJ_EINVAL, &err, NULL));
  lj_step_lines_plan_destroy(plan);
  lj_step_lines_plan_destroy(NULL);
}

/* The same lines streamed from a pipe to a pipe, and descriptors that cannot be used. */
static void test_lines_fd(const char *input, const char *expected, const lj_step_plan_options_t *o) {
  int in[2], out[2];
  char got[4096];
  size_t got_len = 0;
  ssize_t n;
  lj_step_plan_summary_t sum;
  lj_error_t *err = NULL;
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  CHECK(write(in[1], input, strlen(input)) == (ssize_t)strlen(input));
  close(in[1]);
  memset(&sum, 0xff, sizeof sum);
  CHECK(lj_step_plan_lines_fd(&sum, in[0], out[1], o, &err) == LJ_OK);
  close(out[1]);
  while ((n = read(out[0], got + got_len, sizeof got - 1 - got_len)) > 0) got_len += (size_t)n;
  got[got_len] = '\0';
  CHECK(got_len == strlen(expected) && strcmp(got, expected) == 0);
  CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
        sum.malformed == 4);
  close(in[0]);
  close(out[0]);

  CHECK(expect_error(lj_step_plan_lines_fd(NULL, -1, 1, o, &err), LJ_EINVAL, &err,
                     "the file descriptors must not be negative"));
  CHECK(expect_error(lj_step_plan_lines_fd(NULL, 0, -2, o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines_fd(NULL, 0, 1, NULL, &err), LJ_EINVAL, &err, NULL));
  /* A descriptor closed already cannot be read; the read end of a pipe cannot be
   * written: each an I/O error, and the summary says what was planned before. */
  CHECK(pipe(in) == 0);
  close(in[0]);
  close(in[1]);
  CHECK(expect_error(lj_step_plan_lines_fd(&sum, in[0], 1, o, &err), LJ_EIO, &err, NULL));
  CHECK(sum.ends == 0 && sum.malformed == 0);
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  CHECK(write(in[1], input, strlen(input)) == (ssize_t)strlen(input));
  close(in[1]);
  CHECK(expect_error(lj_step_plan_lines_fd(&sum, in[0], out[0], o, &err), LJ_EIO, &err, NULL));
  CHECK(sum.ends == 3 && sum.malformed == 4);
  close(in[0]);
  close(out[0]);
  close(out[1]);
}

/* An answer many times longer than its input (the answer's room is guessed from the
   input's size, then grown): every byte of it as one line's answer written n times. */
static void test_lines_long_answer(void) {
  enum { n = 200000 };
  static const char one[] = MALFORMED("null", "it names no key");
  const size_t one_len = sizeof one - 1;
  char *input = malloc(3 * n), *out = NULL;
  size_t out_len = 0, i;
  lj_step_plan_summary_t sum;
  lj_step_plan_options_t o = plan_options();
  int same = 1;
  CHECK(input != NULL);
  if (input == NULL) return;
  for (i = 0; i < n; ++i) memcpy(input + 3 * i, "{}\n", 3);
  CHECK(lj_step_plan_lines(&out, &out_len, &sum, input, 3 * n, &o, NULL) == LJ_OK);
  CHECK(out != NULL && out_len == n * one_len && out[out_len] == '\0');
  for (i = 0; out != NULL && out_len == n * one_len && i < n && same; ++i)
    same = memcmp(out + i * one_len, one, one_len) == 0;
  CHECK(same);
  CHECK(sum.malformed == n && sum.ends == 0 && sum.leaves == 0);
  lj_free(out);
  free(input);
}

/* Appends to a buffer that grows: the answers of a large plan. */
struct grown {
  char *text;
  size_t len, cap;
};

static int grow_append(const char *data, size_t len, void *payload) {
  struct grown *g = (struct grown *)payload;
  if (g->len + len + 1 > g->cap) {
    size_t cap = 2 * (g->len + len + 1);
    char *more = realloc(g->text, cap);
    if (more == NULL) return 1;
    g->text = more;
    g->cap = cap;
  }
  memcpy(g->text + g->len, data, len);
  g->len += len;
  g->text[g->len] = '\0';
  return 0;
}

/* The lines of test_lines, thousands of times over (megabytes: each piece of input is
 * shared between threads), planned over 1, 2 and 5 threads in memory, fed in pieces and
 * streamed between files (0 threads as one, UINT32_MAX as 64): the same answers as the
 * hand-written ones, as many times. */
static void test_lines_threads(const char *input, const char *expected) {
  enum { copies = 3000 };
  size_t in_len = strlen(input), ex_len = strlen(expected), i;
  char *big = malloc(copies * (in_len + 1)), *want = malloc(copies * ex_len + 1);
  uint32_t threads[] = {1, 2, 5, 0, UINT32_MAX}; /* 0: one; past 64: 64 */
  size_t t;
  CHECK(big != NULL && want != NULL);
  if (big == NULL || want == NULL) return;
  for (i = 0; i < copies; ++i) {
    memcpy(big + i * (in_len + 1), input, in_len);
    big[i * (in_len + 1) + in_len] = '\n';
    memcpy(want + i * ex_len, expected, ex_len);
  }
  want[copies * ex_len] = '\0';
  for (t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
    lj_step_plan_options_t o = plan_options();
    lj_step_plan_summary_t sum;
    lj_step_lines_plan_t *plan = NULL;
    struct grown g = {NULL, 0, 0};
    char *out = NULL;
    size_t out_len = 0, at, piece = 700001;
    FILE *in_file = tmpfile(), *out_file = tmpfile();
    o.threads = threads[t];
    CHECK(lj_step_plan_lines(&out, &out_len, &sum, big, copies * (in_len + 1), &o, NULL) == LJ_OK);
    CHECK(out != NULL && out_len == copies * ex_len && memcmp(out, want, out_len) == 0);
    CHECK(sum.ends == 3 * copies && sum.no_step == 2 * copies && sum.other_node == copies && sum.malformed == 4 * copies);
    lj_free(out);
    CHECK(lj_step_lines_plan_create(&plan, &o, NULL) == LJ_OK);
    for (at = 0; at < copies * (in_len + 1); at += piece) {
      size_t n = copies * (in_len + 1) - at < piece ? copies * (in_len + 1) - at : piece;
      CHECK(lj_step_lines_plan_feed(plan, big + at, n, grow_append, &g, NULL) == LJ_OK);
    }
    memset(&sum, 0xff, sizeof sum);
    CHECK(lj_step_lines_plan_finish(&sum, plan, grow_append, &g, NULL) == LJ_OK);
    CHECK(g.len == copies * ex_len && g.text != NULL && strcmp(g.text, want) == 0);
    CHECK(sum.ends == 3 * copies && sum.malformed == 4 * copies);
    lj_step_lines_plan_destroy(plan);
    free(g.text);
    CHECK(in_file != NULL && out_file != NULL);
    if (in_file != NULL && out_file != NULL) {
      char *back = malloc(copies * ex_len + 1);
      CHECK(fwrite(big, 1, copies * (in_len + 1), in_file) == copies * (in_len + 1) && fflush(in_file) == 0);
      rewind(in_file);
      memset(&sum, 0xff, sizeof sum);
      CHECK(lj_step_plan_lines_fd(&sum, fileno(in_file), fileno(out_file), &o, NULL) == LJ_OK);
      CHECK(sum.ends == 3 * copies && sum.malformed == 4 * copies);
      rewind(out_file);
      CHECK(back != NULL && fread(back, 1, copies * ex_len + 1, out_file) == copies * ex_len);
      CHECK(back != NULL && memcmp(back, want, copies * ex_len) == 0);
      free(back);
    }
    if (in_file != NULL) fclose(in_file);
    if (out_file != NULL) fclose(out_file);
  }
  free(big);
  free(want);
}

static void test_lines(void) {
  const char *input =
      "{\"key\":\"n1.h\",\"revision\":3,\"value\":{\"id\":\"h\",\"tool\":\"go build\",\"state\":\"running\",\"owner\":\"o.1.2\"}}\n"
      "\n"
      "  \r\n"
      "{\"key\":\"n2.x\",\"value\":{\"state\":\"running\"}}\n"
      "{\"key\":\"n1.q\",\"value\":\"{\\\"state\\\":\\\"running\\\",\\\"owner\\\":\\\"o\\\"\"}\n"
      "{\"key\":\"n1.e\"}\n"
      "not json\n"
      "{\"value\":{}}\n"
      "{\"key\":7}\n"
      "{\"key\":\"n1.r\",\"revision\":-1}\n"
      "{\"key\":\"n1.\xff\",\"value\":{\"state\":\"running\",\"owner\":\"\xfe\"}}\r\n"
      "{\"key\":\"n1.s\",\"value\":\"{\\\"state\\\":\\\"running\\\",\\\"owner\\\":\\\"o\\\"}\"}";
  const char *expected =
      "{\"key\":\"n1.h\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n"
      "{\"key\":\"n2.x\",\"action\":\"leave\",\"reason\":\"other-node\",\"why\":\"the key is no step key of this node\"}\n"
      "{\"key\":\"n1.q\",\"action\":\"leave\",\"reason\":\"no-step\",\"why\":\"the value is no step (Go's decoder refuses it)\"}\n"
      "{\"key\":\"n1.e\",\"action\":\"leave\",\"reason\":\"no-value\",\"why\":\"the key holds no value\"}\n"
      MALFORMED("null", "the line is not one JSON value")
      MALFORMED("null", "it names no key")
      MALFORMED("null", "its key is no string")
      MALFORMED("\"n1.r\"", "its revision is no integer from 0 to 2^64-1")
      "{\"key\":\"n1.\xef\xbf\xbd\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n"
      "{\"key\":\"n1.s\",\"action\":\"end\",\"reason\":\"owner-not-self\",\"why\":\"" RESTART "\"}\n";
  char *out = NULL, *line = NULL;
  size_t out_len = 0, line_len = 0;
  lj_step_plan_summary_t sum;
  lj_step_plan_options_t o = plan_options();
  lj_error_t *err = NULL;
  CHECK(lj_step_plan_lines(&out, &out_len, &sum, input, strlen(input), &o, &err) == LJ_OK);
  CHECK(out != NULL && strcmp(out, expected) == 0);
  if (out != NULL && strcmp(out, expected) != 0) printf("# got:\n%s", out);
  CHECK(out_len == strlen(expected));
  CHECK(sum.ends == 3 && sum.deletes == 0 && sum.leaves == 0 && sum.no_step == 2 && sum.other_node == 1 &&
        sum.malformed == 4);
  lj_free(out);
  CHECK(lj_step_plan_summary_format(&line, &line_len, &sum, &err) == LJ_OK);
  CHECK(strcmp(line, "step plan: 6 keys: 3 end, 0 delete, 0 leave, 2 no-step, 1 other-node, 4 malformed lines") == 0);
  CHECK(line_len == strlen(line));
  lj_free(line);
  {
    /* One key, one malformed line: singular nouns. */
    lj_step_plan_summary_t one;
    memset(&one, 0, sizeof one);
    one.leaves = 1;
    one.malformed = 1;
    CHECK(lj_step_plan_summary_format(&line, &line_len, &one, NULL) == LJ_OK);
    CHECK(strcmp(line, "step plan: 1 key: 0 end, 0 delete, 1 leave, 0 no-step, 0 other-node, 1 malformed line") == 0);
    lj_free(line);
  }
  CHECK(lj_step_plan_lines(&out, &out_len, NULL, NULL, 0, &o, NULL) == LJ_OK);
  CHECK(out_len == 0 && out != NULL && out[0] == '\0');
  lj_free(out);
  CHECK(expect_error(lj_step_plan_lines(NULL, &out_len, NULL, input, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines(&out, &out_len, NULL, NULL, 3, &o, &err), LJ_EINVAL, &err, NULL));
  CHECK(expect_error(lj_step_plan_lines(&out, &out_len, NULL, input, 3, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(out == NULL);
  test_lines_fd(input, expected, &o);
  test_lines_fed(input, expected, &o);
  test_lines_threads(input, expected);
  CHECK(expect_error(lj_step_plan_summary_format(&line, NULL, NULL, &err), LJ_EINVAL, &err, NULL));
  CHECK(line == NULL);
  CHECK(expect_error(lj_step_plan_summary_format(NULL, NULL, &sum, &err), LJ_EINVAL, &err, NULL));
}

int main(void) {
  test_lines();
  test_lines_long_answer();
  return CHECK_SUMMARY();
}
