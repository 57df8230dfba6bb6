/*
 * leasejudge C ABI: what every part shares (included by each part).
 *
 * Versions, the error codes and their texts, the error object, lj_free and the
 * LJ_API marker. The conventions every part keeps are listed in leasejudge.h.
 */
#ifndef LEASEJUDGE_LJ_COMMON_H
#define LEASEJUDGE_LJ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LJ_BUILDING)
#define LJ_API __attribute__((visibility("default")))
#else
#define LJ_API
#endif

/* --- versions -------------------------------------------------------------- */

#define LJ_VERSION_MAJOR 0
#define LJ_VERSION_MINOR 1
#define LJ_VERSION_PATCH 0
#define LJ_VERSION_NUMBER (LJ_VERSION_MAJOR * 10000 + LJ_VERSION_MINOR * 100 + LJ_VERSION_PATCH)

/* The library's version as "MAJOR.MINOR.PATCH" (static storage, never freed). */
LJ_API const char *lj_version(void);
/* The library's LJ_VERSION_NUMBER: compare with the header's at load time. */
LJ_API unsigned lj_version_number(void);

/* --- errors ----------------------------------------------------------------- */

#define LJ_OK 0
#define LJ_EINVAL (-1)       /* a NULL pointer or an argument out of range */
#define LJ_ENOMEM (-2)
#define LJ_EPARSE (-3)       /* bytes that are not what the format says */
#define LJ_ECHANGED (-4)     /* a compare-and-swap lost: the key moved since it was read */
#define LJ_ENOTFOUND (-5)    /* no such key, pid, file or executable */
#define LJ_EIO (-6)          /* a system call or a child process failed */
#define LJ_EVERSION (-7)     /* an options struct of an unknown version */
#define LJ_EUSER (-8)        /* a callback returned non-zero */
#define LJ_ETIMEOUT (-9)
#define LJ_EUNSUPPORTED (-10)
#define LJ_EEXISTS (-11)     /* create-if-absent found the key */
#define LJ_EREFUSED (-12)    /* a rule refuses the action */
#define LJ_ESTORE (-13)      /* the store failed */
#define LJ_EBUSY (-14)       /* a live holder keeps the lock */
#define LJ_EINTERNAL (-15)   /* a bug in leasejudge */
#define LJ_EUNKNOWN (-16)    /* a write was sent and no answer came: it may have landed */

/* A short, stable English name for code ("changed", ...); static storage. */
LJ_API const char *lj_strerror(int code);

typedef struct lj_error_t lj_error_t;
/* The code and the sentence of an error; the string lives as long as err. */
LJ_API int lj_error_code(const lj_error_t *err);
LJ_API const char *lj_error_message(const lj_error_t *err);
LJ_API void lj_error_destroy(lj_error_t *err);

/* Free a string or buffer the library returned. */
LJ_API void lj_free(void *ptr);

/* text as a JSON string, quotes included, as Go's json.Marshal writes it: valid JSON
 * for any bytes (ill-formed UTF-8 as \ufffd, control bytes escaped). *out is the
 * caller's. LJ_EINVAL for NULL out or a NULL text with a length. */
LJ_API int lj_json_quote(char **out, size_t *out_len, const char *text, size_t text_len, lj_error_t **err);

/* The default of a time argument or option (nanoseconds or milliseconds alike):
 * "now" for a now, this process's start for a before or a boot. */
#define LJ_TIME_DEFAULT INT64_MIN

#ifdef __cplusplus
}
#endif

#endif /* LEASEJUDGE_LJ_COMMON_H */
