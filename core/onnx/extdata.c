/*
 * extdata.c — reading TensorProto external data (data_location = EXTERNAL) with the confinement rules of
 * docs/ExternalDataSecurity.md and model-formats.md §3 / §9 item 25.
 *
 * Threat model: the model file is hostile. Its `external_data` entries pick a path and a byte range, so
 * without care they are an arbitrary-file-read primitive (CVE-2022-25882, CVE-2024-27318, CVE-2026-27489)
 * and, with ORT's
 * `*_ORT_MEM_ADDR_*` sentinel, an arbitrary-pointer-read primitive. The rules, in the order they are applied:
 *
 *   1. Keys: only `location` (required), `offset`, `length`, `checksum`; each at most once. Anything else,
 *      including the Python loader's `basepath`, is rejected. `checksum` is accepted but NOT verified (its
 * value is not inspected at all; the bytes are only bounded by offset/length/expected size).
 *   2. base_dir NULL (model loaded from memory) rejects before anything touches the file system (ORT PR
 * #27430).
 *   3. location, lexically: non-empty; no control characters (NUL cannot occur in a C string); not absolute;
 * no backslash; no drive prefix ("C:..."); not ORT's sentinel (anything containing "_ORT_MEM_ADDR_", or
 * starting with "*" + "/"); split on '/', every component must be non-empty (so "a//b" and "a/" are rejected)
 * and must not be "." or "..". We reject "." components instead of normalizing them away: a writer never
 * needs them, and the stricter the accepted language, the fewer normalization bugs (the "subdir/../../x"
 * bypass of CVE-2024-27318 came from a normalizer).
 *   4. offset/length: plain decimal digits only (no sign, whitespace, "0x", suffix), 1..19 digits, value
 *      <= INT64_MAX. Leading zeros are allowed ("007" is plain decimal).
 *   5. The path is resolved one component at a time from an fd on base_dir (base_dir itself is trusted and
 * may be reached through symlinks). For every component we first fstatat(AT_SYMLINK_NOFOLLOW) it: a symlink
 * is rejected wherever it is (even one that would stay inside base_dir), a parent must be a directory, the
 * final component must be a regular file — checked BEFORE open, so a FIFO or device is never opened (no
 * blocking open, no side effects). Then openat(O_NOFOLLOW | O_CLOEXEC [| O_DIRECTORY for parents, |
 * O_NONBLOCK for the file]) and fstat on the fd, whose (st_dev, st_ino) must match what fstatat saw: a swap
 * between check and open (TOCTOU, ONNX PR #7790) is detected. The opened file must be S_ISREG with st_nlink
 * == 1. Only two fds are open at any time; every fd is closed on every path.
 *   6. Range: offset <= file size; with `length`: length == expected_bytes and length <= size - offset (no
 *      addition, so no overflow); without `length`: at least expected_bytes must remain after offset
 * (trailing bytes are allowed, as several tensors may share one file).
 *   7. The payload buffer comes from pc_mem_alloc(mem, expected_bytes) — only after the range has been
 * validated, so a hostile tensor cannot make us allocate more than the file holds — and is filled with a
 * pread loop (EINTR retried, short reads continued; hitting EOF early means the file shrank: PC_ERR_IO).
 *
 * expected_bytes == 0: the file and range are still validated, and *out receives a valid 1-byte allocation
 * from pc_mem_alloc(mem, 1) (never NULL on PC_OK); the caller frees it with pc_mem_free like any other
 * payload.
 *
 * Status choices: every rule violation above is PC_ERR_EXTERNAL_DATA. A location that does not exist (ENOENT)
 * or walks through a non-directory is also PC_ERR_EXTERNAL_DATA: it is a defect of the model file, not of the
 * machine. Failures that are not the model's fault (base_dir cannot be opened, EACCES, EMFILE, read errors, a
 * file that shrinks while being read) are PC_ERR_IO. Allocation failures are PC_ERR_BUDGET when
 * mem->over_budget is set, PC_ERR_NOMEM otherwise.
 *
 * Note: parent directories are opened O_RDONLY (POSIX has no portable search-only open), so a directory on
 * the path that is searchable but not readable fails with PC_ERR_IO (EACCES).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/onnx/onnx_internal.h"

/* Largest single pread request; keeps each request far below SSIZE_MAX on every platform. */
#define PC_EXT_READ_CHUNK ((size_t)1 << 30)
/* Longest quoted value shown in a message before it is cut with "...". */
#define PC_EXT_QUOTE_MAX 200

enum pc_ext_key { PC_EXT_LOCATION, PC_EXT_OFFSET, PC_EXT_LENGTH, PC_EXT_CHECKSUM, PC_EXT_KEY_COUNT };

static const char *const pc_ext_key_names[PC_EXT_KEY_COUNT] = {"location", "offset", "length", "checksum"};

/* Writes a printable, bounded rendering of s into dst (cap >= 8): control bytes become \xNN, a backslash
 * becomes
 * "\\" and a quote "\'", so the message stays one unambiguous line; long values are cut with "...". */
static void pc_ext_quote(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    if (!s) {
        snprintf(dst, cap, "(null)");
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char piece[8];
        if (*p < 0x20 || *p == 0x7f)
            snprintf(piece, sizeof piece, "\\x%02x", (unsigned)*p);
        else if (*p == '\\' || *p == '\'')
            snprintf(piece, sizeof piece, "\\%c", (char)*p);
        else
            snprintf(piece, sizeof piece, "%c", (char)*p);
        size_t len = strlen(piece);
        if (n + len + 4 > cap || n + len > PC_EXT_QUOTE_MAX) { /* room for "..." and the terminator */
            memcpy(dst + n, "...", 4);
            return;
        }
        memcpy(dst + n, piece, len);
        n += len;
    }
    dst[n] = '\0';
}

/* Sets err to "external data key '<key>' value '<value>': <reason>" and returns status. */
static pc_status pc_ext_fail(pc_error *err, pc_status status, const char *key, const char *value,
                             const char *fmt, ...) PC_PRINTF(5, 6);
static pc_status pc_ext_fail(pc_error *err, pc_status status, const char *key, const char *value,
                             const char *fmt, ...)
{
    char qkey[64];
    char qvalue[PC_EXT_QUOTE_MAX + 8];
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    pc_ext_quote(qkey, sizeof qkey, key);
    pc_ext_quote(qvalue, sizeof qvalue, value);
    return pc_error_set(err, status, "external data key '%s' value '%s': %s", qkey, qvalue, reason);
}

/* Thread-safe strerror (POSIX strerror_r, the int-returning variant under _POSIX_C_SOURCE=200809L). */
static const char *pc_ext_strerror(int errnum, char *buf, size_t cap)
{
    if (strerror_r(errnum, buf, cap) != 0) snprintf(buf, cap, "errno %d", errnum);
    return buf;
}

static void pc_ext_close(int fd)
{
    if (fd >= 0) (void)close(fd); /* read-only fds: nothing to flush, an error here loses no data */
}

/* Strict decimal: 1..19 ASCII digits, value <= INT64_MAX. */
static bool pc_ext_parse_u63(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t n = 0;
    for (; s[n]; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 19) return false;
        unsigned d = (unsigned)(s[n] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    if (n == 0) return false;
    *out = v;
    return true;
}

static pc_status pc_ext_parse_number(const char *key, const char *value, uint64_t *out, pc_error *err)
{
    if (pc_ext_parse_u63(value, out)) return PC_OK;
    if (value[0] == '\0')
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value,
                           "empty; expected a non-negative decimal integer");
    for (const char *p = value; *p; p++) {
        if (*p < '0' || *p > '9')
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value,
                               "not a plain non-negative decimal integer (only digits 0-9 allowed)");
    }
    return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value,
                       "out of range (more than 19 digits or > INT64_MAX)");
}

/* The lexical rules for `location` (rule 3 above). */
static pc_status pc_ext_check_location(const char *loc, pc_error *err)
{
    const char *key = "location";
    if (loc[0] == '\0') return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "empty location");
    for (const char *p = loc; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "control character 0x%02x at byte %zu",
                               (unsigned)c, (size_t)(p - loc));
    }
    if (strstr(loc, "_ORT_MEM_ADDR_") || (loc[0] == '*' && loc[1] == '/'))
        return pc_ext_fail(
            err, PC_ERR_EXTERNAL_DATA, key, loc,
            "ONNX Runtime in-memory sentinel location (an arbitrary-pointer read) is not allowed");
    if (loc[0] == '/') return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "absolute path not allowed");
    if (strchr(loc, '\\')) return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "backslash not allowed");
    if (((loc[0] >= 'A' && loc[0] <= 'Z') || (loc[0] >= 'a' && loc[0] <= 'z')) && loc[1] == ':')
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "drive prefix '%c:' not allowed", loc[0]);
    const char *comp = loc;
    for (size_t index = 0;; index++) {
        const char *slash = strchr(comp, '/');
        size_t len = slash ? (size_t)(slash - comp) : strlen(comp);
        if (len == 0)
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "empty path component %zu", index);
        if (len == 1 && comp[0] == '.')
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc, "'.' path component %zu not allowed",
                               index);
        if (len == 2 && comp[0] == '.' && comp[1] == '.')
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, loc,
                               "'..' path component %zu not allowed (path traversal)", index);
        if (!slash) return PC_OK;
        comp = slash + 1;
    }
}

/* Maps a failed openat/fstatat errno to a status and message for component `comp` of `loc`. */
static pc_status pc_ext_os_fail(pc_error *err, const char *loc, const char *what, const char *comp,
                                int errnum)
{
    char ebuf[128];
    char qcomp[PC_EXT_QUOTE_MAX + 8];
    pc_ext_quote(qcomp, sizeof qcomp, comp);
    if (errnum == ELOOP || errnum == EMLINK)
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc,
                           "path component '%s' is a symlink (symlinks are not followed)", qcomp);
    pc_status status =
        (errnum == ENOENT || errnum == ENOTDIR || errnum == ENAMETOOLONG) ? PC_ERR_EXTERNAL_DATA : PC_ERR_IO;
    return pc_ext_fail(err, status, "location", loc, "cannot %s '%s': %s", what, qcomp,
                       pc_ext_strerror(errnum, ebuf, sizeof ebuf));
}

/* Opens `loc` (already lexically valid) beneath base_fd, component by component, without following symlinks.
 * On PC_OK *out_fd is the open regular file and *out_st its fstat. */
static pc_status pc_ext_open(int base_fd, const char *loc, pc_mem *mem, int *out_fd, struct stat *out_st,
                             pc_error *err)
{
    size_t loc_len = strlen(loc);
    char *path = pc_mem_alloc(mem, loc_len + 1); /* components are cut in place */
    if (!path)
        return pc_ext_fail(err, mem->over_budget ? PC_ERR_BUDGET : PC_ERR_NOMEM, "location", loc,
                           "cannot allocate %zu bytes for the path", loc_len + 1);
    memcpy(path, loc, loc_len + 1);

    pc_status status = PC_OK;
    int dir_fd = base_fd; /* not owned while it equals base_fd */
    int fd = -1;
    char *comp = path;
    for (;;) {
        char *slash = strchr(comp, '/');
        bool last = slash == NULL;
        if (slash) *slash = '\0';

        struct stat pre, post;
        if (fstatat(dir_fd, comp, &pre, AT_SYMLINK_NOFOLLOW) != 0) {
            status = pc_ext_os_fail(err, loc, "stat", comp, errno);
            break;
        }
        if (S_ISLNK(pre.st_mode)) {
            status = pc_ext_os_fail(err, loc, "open", comp, ELOOP);
            break;
        }
        if (!last && !S_ISDIR(pre.st_mode)) {
            status = pc_ext_os_fail(err, loc, "open", comp, ENOTDIR);
            break;
        }
        if (last && !S_ISREG(pre.st_mode)) {
            status = pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc, "not a regular file (%s)",
                                 S_ISDIR(pre.st_mode)    ? "a directory"
                                 : S_ISFIFO(pre.st_mode) ? "a FIFO"
                                 : S_ISCHR(pre.st_mode)  ? "a character device"
                                 : S_ISBLK(pre.st_mode)  ? "a block device"
                                 : S_ISSOCK(pre.st_mode) ? "a socket"
                                                         : "unknown file type");
            break;
        }

        /* O_NONBLOCK on the file: should it have been swapped for a FIFO after the fstatat, open must not
         * block. */
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
        int next;
        do
            next = openat(dir_fd, comp, flags);
        while (next < 0 && errno == EINTR);
        if (next < 0) {
            status = pc_ext_os_fail(err, loc, "open", comp, errno);
            break;
        }
        if (dir_fd != base_fd) pc_ext_close(dir_fd);
        dir_fd = base_fd;

        if (fstat(next, &post) != 0) {
            int e = errno;
            pc_ext_close(next);
            status = pc_ext_os_fail(err, loc, "fstat", comp, e);
            break;
        }
        if (post.st_dev != pre.st_dev || post.st_ino != pre.st_ino || (!last && !S_ISDIR(post.st_mode))) {
            pc_ext_close(next);
            char qcomp[PC_EXT_QUOTE_MAX + 8];
            pc_ext_quote(qcomp, sizeof qcomp, comp);
            status = pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc,
                                 "path component '%s' changed between check and open", qcomp);
            break;
        }
        if (!last) {
            dir_fd = next;
            comp = slash + 1;
            continue;
        }

        /* The final component: a regular file with exactly one link. */
        if (!S_ISREG(post.st_mode)) {
            pc_ext_close(next);
            status = pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc, "not a regular file");
            break;
        }
        if (post.st_nlink != 1) {
            pc_ext_close(next);
            status = pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc,
                                 "file has %ju hard links (exactly 1 required)", (uintmax_t)post.st_nlink);
            break;
        }
        /* Back to blocking mode for the reads (O_NONBLOCK has no effect on regular files on common systems,
         * but POSIX leaves it unspecified). */
        int fl = fcntl(next, F_GETFL);
        if (fl < 0 || fcntl(next, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            int e = errno;
            pc_ext_close(next);
            status = pc_ext_os_fail(err, loc, "set flags on", comp, e);
            break;
        }
        fd = next;
        *out_st = post;
        break;
    }
    if (dir_fd != base_fd) pc_ext_close(dir_fd);
    pc_mem_free(mem, path);
    if (status == PC_OK) *out_fd = fd;
    return status;
}

/* Reads exactly `size` bytes at `offset` (the caller proved offset + size <= file size). */
static pc_status pc_ext_pread_all(int fd, uint8_t *buf, size_t size, uint64_t offset, const char *loc,
                                  pc_error *err)
{
    size_t done = 0;
    while (done < size) {
        size_t want = size - done;
        if (want > PC_EXT_READ_CHUNK) want = PC_EXT_READ_CHUNK;
        ssize_t got = pread(fd, buf + done, want, (off_t)(offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            char ebuf[128];
            return pc_ext_fail(err, PC_ERR_IO, "location", loc, "read of %zu bytes at offset %ju failed: %s",
                               want, (uintmax_t)(offset + done), pc_ext_strerror(errno, ebuf, sizeof ebuf));
        }
        if (got == 0)
            return pc_ext_fail(
                err, PC_ERR_IO, "location", loc,
                "file ended at offset %ju while reading %zu bytes at offset %ju (file shrank?)",
                (uintmax_t)(offset + done), size, (uintmax_t)offset);
        done += (size_t)got;
    }
    return PC_OK;
}

pc_status pc_extdata_read(const char *base_dir, const pc_kv *entries, size_t n_entries, size_t expected_bytes,
                          pc_mem *mem, void **out, pc_error *err)
{
    if (out) *out = NULL;
    if (!out || !mem || (!entries && n_entries > 0))
        return pc_error_set(err, PC_ERR_USAGE, "pc_extdata_read: NULL argument");

    /* 1. Keys. */
    const char *values[PC_EXT_KEY_COUNT] = {NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < n_entries; i++) {
        const char *key = entries[i].key;
        const char *value = entries[i].value;
        if (!key) return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "", value, "entry %zu has no key", i);
        int k = -1;
        for (int j = 0; j < PC_EXT_KEY_COUNT; j++) {
            if (strcmp(key, pc_ext_key_names[j]) == 0) k = j;
        }
        if (k < 0)
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value,
                               "unknown key (allowed: location, offset, length, checksum)");
        if (!value) return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value, "key has no value");
        if (values[k]) {
            char qfirst[PC_EXT_QUOTE_MAX + 8];
            pc_ext_quote(qfirst, sizeof qfirst, values[k]);
            return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, key, value, "duplicate key (first value '%s')",
                               qfirst);
        }
        values[k] = value;
    }
    /* values[PC_EXT_CHECKSUM] is deliberately accepted and ignored: the checksum is not verified. */
    const char *loc = values[PC_EXT_LOCATION];
    if (!loc) return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", NULL, "required key is missing");

    /* 2. No base directory: the model came from memory. */
    if (!base_dir)
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc,
                           "model loaded from memory has no base directory");

    /* 3 and 4. Lexical checks. */
    pc_status status = pc_ext_check_location(loc, err);
    if (status != PC_OK) return status;
    uint64_t offset = 0, length = 0;
    bool has_length = values[PC_EXT_LENGTH] != NULL;
    if (values[PC_EXT_OFFSET] &&
        (status = pc_ext_parse_number("offset", values[PC_EXT_OFFSET], &offset, err)) != PC_OK)
        return status;
    if (has_length && (status = pc_ext_parse_number("length", values[PC_EXT_LENGTH], &length, err)) != PC_OK)
        return status;
    if (has_length && length != (uint64_t)expected_bytes)
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "length", values[PC_EXT_LENGTH],
                           "does not match the tensor's expected size of %zu bytes", expected_bytes);

    /* 5. Open beneath base_dir. */
    int base_fd;
    do
        base_fd = open(base_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (base_fd < 0 && errno == EINTR);
    if (base_fd < 0) {
        char ebuf[128];
        char qdir[PC_EXT_QUOTE_MAX + 8];
        pc_ext_quote(qdir, sizeof qdir, base_dir);
        return pc_ext_fail(err, PC_ERR_IO, "location", loc, "cannot open base directory '%s': %s", qdir,
                           pc_ext_strerror(errno, ebuf, sizeof ebuf));
    }
    int fd = -1;
    struct stat st;
    memset(&st, 0, sizeof st);
    status = pc_ext_open(base_fd, loc, mem, &fd, &st, err);
    pc_ext_close(base_fd);
    if (status != PC_OK) return status;

    /* 6. Range. */
    uint64_t file_size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
    if (offset > file_size) {
        pc_ext_close(fd);
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "offset", values[PC_EXT_OFFSET],
                           "past the end of '%.128s' (%ju bytes)", loc, (uintmax_t)file_size);
    }
    uint64_t avail = file_size - offset;
    if (has_length && length > avail) {
        pc_ext_close(fd);
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "length", values[PC_EXT_LENGTH],
                           "offset %ju + length runs past the end of '%.128s' (%ju bytes)", (uintmax_t)offset,
                           loc, (uintmax_t)file_size);
    }
    if ((uint64_t)expected_bytes > avail) {
        pc_ext_close(fd);
        return pc_ext_fail(err, PC_ERR_EXTERNAL_DATA, "location", loc,
                           "file has %ju bytes after offset %ju, the tensor needs %zu", (uintmax_t)avail,
                           (uintmax_t)offset, expected_bytes);
    }

    /* 7. Allocate and read. */
    size_t alloc = expected_bytes ? expected_bytes : 1;
    uint8_t *buf = pc_mem_alloc(mem, alloc);
    if (!buf) {
        pc_ext_close(fd);
        return pc_ext_fail(err, mem->over_budget ? PC_ERR_BUDGET : PC_ERR_NOMEM, "location", loc,
                           "cannot allocate %zu bytes for the tensor data", alloc);
    }
    status = pc_ext_pread_all(fd, buf, expected_bytes, offset, loc, err);
    pc_ext_close(fd);
    if (status != PC_OK) {
        pc_mem_free(mem, buf);
        return status;
    }
    *out = buf;
    return PC_OK;
}
