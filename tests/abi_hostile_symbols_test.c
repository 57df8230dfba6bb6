/* Every exported symbol of capi/leasejudge.symbols has its hostile-argument case: a
 * row {"symbol", case} in the table of exactly one tests/abi_hostile_<part>_test.c,
 * and no table names a symbol that is not exported. A symbol without a case fails
 * the test, so every new symbol gets one.
 * TAP-style output, a closing "N passed, N failed" line. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "leasejudge.h"
#include "check.h"

#define MAX_ROWS 512

static char rows[MAX_ROWS][64];
static size_t row_count;

/* The rows of one test's table: lines `    {"lj_name", case_name},`. */
static void read_table(const char *path) {
  char line[256];
  FILE *f = fopen(path, "r");
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    char *end;
    if (strncmp(line, "    {\"lj_", 9) != 0 || strstr(line, "\", case_") == NULL) continue;
    end = strchr(line + 6, '"');
    if (row_count < MAX_ROWS && end - (line + 6) < 64) {
      *end = '\0';
      strcpy(rows[row_count++], line + 6);
    }
  }
  if (f != NULL) fclose(f);
}

static void read_tables(void) {
  char path[4096];
  struct dirent *e;
  DIR *d = opendir(LEASEJUDGE_SOURCE_DIR "/tests");
  while (d != NULL && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, "abi_hostile_", 12) != 0 || n < 7 || strcmp(e->d_name + n - 7, "_test.c") != 0) continue;
    snprintf(path, sizeof path, "%s/tests/%s", LEASEJUDGE_SOURCE_DIR, e->d_name);
    read_table(path);
  }
  if (d != NULL) closedir(d);
}

int main(void) {
  char path[4096], line[256];
  FILE *f;
  size_t i, symbols = 0;

  read_tables();
  /* Every exported symbol has a case. */
  snprintf(path, sizeof path, "%s/capi/leasejudge.symbols", LEASEJUDGE_SOURCE_DIR);
  f = fopen(path, "r");
  CHECK(f != NULL);
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    size_t n = strcspn(line, " \t\r\n");
    int found = 0;
    if (line[0] == '#' || n == 0) continue;
    line[n] = '\0';
    symbols++;
    for (i = 0; i < row_count; i++) found += strcmp(rows[i], line) == 0;
    if (found != 1) {
      check_failed++;
      printf("not ok - the exported symbol %s has %d hostile-argument cases, not one\n", line, found);
    }
  }
  if (f != NULL) fclose(f);
  CHECK(symbols == row_count);
  return CHECK_SUMMARY();
}
