/*
 * c-wordfilter: a Gatehouse forms.submit plugin written in C against the
 * gatehouse_v1 ABI (docs/plugins.md), built with clang and wasi-libc:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -o c-wordfilter.wasm main.c
 *
 * It rejects a submission whose input mentions a word (config key "word",
 * default "casino"), ignoring case. For brevity it searches the whole input
 * document, field names included; a real filter would parse the JSON.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

/* Host functions: the import module is gatehouse_v1, named per function. */
#define GATEHOUSE_IMPORT(name) __attribute__((import_module("gatehouse_v1"), import_name(name)))
/* Exports need an explicit name: clang does not export functions otherwise. */
#define GATEHOUSE_EXPORT(name) __attribute__((export_name(name)))

GATEHOUSE_IMPORT("input_read") int32_t input_read(void *buf, int32_t cap);
GATEHOUSE_IMPORT("output_write") int32_t output_write(const void *ptr, int32_t len);
GATEHOUSE_IMPORT("config_get") int32_t config_get(const char *key, int32_t key_len, char *buf, int32_t cap);
GATEHOUSE_IMPORT("log") void host_log(int32_t level, const char *ptr, int32_t len);

enum { LOG_INFO = 0, LOG_WARN = 4 };

/* The ABI marker: the minor version of gatehouse_v1 this module was built for. */
GATEHOUSE_EXPORT("gatehouse_abi_v1") int32_t gatehouse_abi_v1(void) { return 0; }

static char word[64];
static size_t word_len;

/* Runs once per instance, from _initialize (the reactor's entry point), like
 * any constructor: config values do not change during an instance's life. */
__attribute__((constructor)) static void load_config(void) {
    int32_t n = config_get("word", 4, word, sizeof word);
    if (n < 0 || n >= (int32_t)sizeof word) {
        strcpy(word, "casino");
        n = 6;
    }
    word[n] = 0;
    for (int32_t i = 0; i < n; i++) word[i] = (char)tolower((unsigned char)word[i]);
    word_len = (size_t)n;
}

static int contains_word(const unsigned char *s, size_t n) {
    if (word_len == 0 || n < word_len) return 0;
    for (size_t i = 0; i + word_len <= n; i++) {
        size_t j = 0;
        while (j < word_len && tolower(s[i + j]) == (unsigned char)word[j]) j++;
        if (j == word_len) return 1;
    }
    return 0;
}

/* Input is pulled: input_read answers the length, and copies only when the
 * buffer is large enough. */
static unsigned char small[4096];

static int32_t reply(const char *s) { return output_write(s, (int32_t)strlen(s)); }

GATEHOUSE_EXPORT("hook_forms_submit") int32_t hook_forms_submit(void) {
    unsigned char *in = small;
    int32_t n = input_read(in, sizeof small);
    if (n > (int32_t)sizeof small) {
        in = malloc((size_t)n);
        if (in == NULL) return 1;
        n = input_read(in, n);
    }
    if (n < 0) {
        reply("input_read failed");
        return 1; /* the call failed; the output is the message for the log */
    }
    int32_t rc = 0;
    if (contains_word(in, (size_t)n)) {
        char line[128];
        int len = snprintf(line, sizeof line, "rejected a submission mentioning %s", word);
        host_log(LOG_INFO, line, len);
        /* What a guest prints on stdout or stderr lands in the plugin's log too. */
        fprintf(stderr, "c-wordfilter: %d input bytes\n", (int)n);
        if (reply("{\"action\":\"reject\",\"code\":\"SPAM_DETECTED\",\"message\":\"this message mentions a blocked word\"}") < 0) rc = 1;
    }
    if (in != small) free(in);
    return rc; /* 0 with an empty output allows */
}
