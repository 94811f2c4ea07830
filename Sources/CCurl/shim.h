/* libcurl for Swift. curl_easy_setopt/getinfo are variadic, which Swift cannot call:
   these fixed-signature wrappers are the only way phikit reaches them. */
#ifndef PHIKIT_CCURL_SHIM_H
#define PHIKIT_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode pk_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pk_curl_set_write_fn(CURL *h, size_t (*fn)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fn);
}
/* Request bodies (POST, PUT) are pulled from a read callback (CURLOPT_READFUNCTION). */
static inline CURLcode pk_curl_set_read_fn(CURL *h, size_t (*fn)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_READFUNCTION, fn);
}
static inline CURLcode pk_curl_set_header_fn(CURL *h, size_t (*fn)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, fn);
}
/* Progress callback (CURLOPT_XFERINFOFUNCTION): returning non-zero aborts the transfer, which
   is how a Ctrl-C reaches a download that is waiting on a stalled connection. */
static inline CURLcode pk_curl_set_xferinfo_fn(
    CURL *h, int (*fn)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, fn);
}
static inline CURLcode pk_curl_info_long(CURL *h, CURLINFO i, long *out) { return curl_easy_getinfo(h, i, out); }
static inline CURLcode pk_curl_info_str(CURL *h, CURLINFO i, char **out) { return curl_easy_getinfo(h, i, out); }
static inline CURLcode pk_curl_info_off(CURL *h, CURLINFO i, curl_off_t *out) { return curl_easy_getinfo(h, i, out); }
#endif
