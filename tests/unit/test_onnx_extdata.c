/* Unit tests for pc_extdata_read (core/onnx/extdata.c): every acceptance and rejection rule of external data.
 *
 * Layout of the temp dir (mkdtemp under /tmp), all relative to it:
 *   w.bin           64 bytes, byte i = i * 7 + 3
 *   sub/d.bin       16 bytes, byte i = 0xa0 + i
 *   empty.bin       0 bytes
 *   h1.bin, h2.bin  the same inode (link count 2)
 *   link.bin        symlink -> w.bin (stays inside: still rejected)
 *   out.bin         symlink -> /etc/passwd
 *   lsub            symlink -> sub (symlinked parent)
 *   fifo            a FIFO (must be rejected without blocking)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/onnx/onnx_internal.h"
#include "tests/test_util.h"

static char g_dir[64];
static char g_created[32][64]; /* relative names, removed in reverse order */
static int g_n_created;
static uint8_t g_w[64];
static uint8_t g_d[16];

static void path_of(char *buf, size_t cap, const char *rel)
{
    snprintf(buf, cap, "%s/%s", g_dir, rel);
}

static void remember(const char *rel)
{
    if (g_n_created < (int)(sizeof g_created / sizeof g_created[0]))
        snprintf(g_created[g_n_created++], sizeof g_created[0], "%s", rel);
}

static void write_file(const char *rel, const void *data, size_t size)
{
    char p[256];
    path_of(p, sizeof p, rel);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (size) CHECK(fwrite(data, 1, size, f) == size);
    CHECK(fclose(f) == 0);
    remember(rel);
}

static void make_symlink(const char *target, const char *rel)
{
    char p[256];
    path_of(p, sizeof p, rel);
    CHECK(symlink(target, p) == 0);
    remember(rel);
}

static void cleanup(void)
{
    for (int i = g_n_created - 1; i >= 0; i--) {
        char p[256];
        path_of(p, sizeof p, g_created[i]);
        if (unlink(p) != 0) CHECK_MSG(rmdir(p) == 0, "cannot remove %s", p);
    }
    CHECK_MSG(rmdir(g_dir) == 0, "cannot remove %s", g_dir);
}

/* The lowest free fd: equal before and after the tests iff no fd leaked. */
static int fd_probe(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) close(fd);
    return fd;
}

/* Runs pc_extdata_read on the temp dir; on failure checks that *out is NULL and nothing stays allocated. */
static pc_status run(const pc_kv *kv, size_t n, size_t expected, void **out, pc_mem *mem, pc_error *err)
{
    *out = (void *)&g_dir; /* must be overwritten */
    size_t used_before = mem->used;
    pc_status st = pc_extdata_read(g_dir, kv, n, expected, mem, out, err);
    if (st != PC_OK) {
        CHECK(*out == NULL);
        CHECK(mem->used == used_before);
    } else {
        CHECK(*out != NULL);
        CHECK(mem->used == used_before + (expected ? expected : 1));
    }
    return st;
}

/* Expects rejection with status `want` and a message containing both needles (NULL: not checked). */
#define EXPECT_REJECT(kv, expected, want, needle1, needle2)                                                  \
    do {                                                                                                     \
        pc_mem m_ = {0};                                                                                     \
        pc_error e_store_ = {0}, *e_ = &e_store_;                                                            \
        void *o_ = NULL;                                                                                     \
        CHECK_STATUS(run((kv), sizeof(kv) / sizeof((kv)[0]), (expected), &o_, &m_, e_), (want), e_);         \
        CHECK(e_->status == (want));                                                                         \
        const char *n1_ = (needle1), *n2_ = (needle2);                                                       \
        if (n1_) CHECK_MSG(strstr(e_->message, n1_) != NULL, "message '%s' lacks '%s'", e_->message, n1_);   \
        if (n2_) CHECK_MSG(strstr(e_->message, n2_) != NULL, "message '%s' lacks '%s'", e_->message, n2_);   \
        if (o_) pc_mem_free(&m_, o_);                                                                        \
    } while (0)

static void setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/pc_extdata_XXXXXX");
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "mkdtemp failed: %s\n", strerror(errno));
        exit(1);
    }
    for (size_t i = 0; i < sizeof g_w; i++)
        g_w[i] = (uint8_t)(i * 7 + 3);
    for (size_t i = 0; i < sizeof g_d; i++)
        g_d[i] = (uint8_t)(0xa0 + i);
    write_file("w.bin", g_w, sizeof g_w);
    char p[256];
    path_of(p, sizeof p, "sub");
    CHECK(mkdir(p, 0700) == 0);
    remember("sub");
    write_file("sub/d.bin", g_d, sizeof g_d);
    write_file("empty.bin", NULL, 0);
    write_file("h1.bin", g_d, sizeof g_d);
    char p2[256];
    path_of(p, sizeof p, "h1.bin");
    path_of(p2, sizeof p2, "h2.bin");
    CHECK(link(p, p2) == 0);
    remember("h2.bin");
    make_symlink("w.bin", "link.bin");
    make_symlink("/etc/passwd", "out.bin");
    make_symlink("sub", "lsub");
    path_of(p, sizeof p, "fifo");
    CHECK(mkfifo(p, 0600) == 0);
    remember("fifo");
}

static void test_good(void)
{
    pc_mem mem = {0};
    pc_error err_store = {0}, *err = &err_store; /* a pointer: keeps gcc's -Waddress quiet in CHECK_STATUS */
    void *out = NULL;

    /* Whole file, no offset/length. */
    const pc_kv whole[] = {{"location", "w.bin"}};
    CHECK_OK(run(whole, 1, sizeof g_w, &out, &mem, err), err);
    CHECK(out && memcmp(out, g_w, sizeof g_w) == 0);
    pc_mem_free(&mem, out);

    /* offset + length, plus an (unverified) checksum in any order. */
    const pc_kv ranged[] = {
        {"length", "32"}, {"checksum", "not-even-hex"}, {"offset", "16"}, {"location", "w.bin"}};
    CHECK_OK(run(ranged, 4, 32, &out, &mem, err), err);
    CHECK(out && memcmp(out, g_w + 16, 32) == 0);
    pc_mem_free(&mem, out);

    /* offset without length: trailing bytes after the tensor are fine. */
    const pc_kv off_only[] = {{"location", "w.bin"}, {"offset", "10"}};
    CHECK_OK(run(off_only, 2, 20, &out, &mem, err), err);
    CHECK(out && memcmp(out, g_w + 10, 20) == 0);
    pc_mem_free(&mem, out);

    /* Leading zeros are plain decimal; range ending exactly at EOF. */
    const pc_kv zeros[] = {{"location", "w.bin"}, {"offset", "0000000000000000060"}, {"length", "004"}};
    CHECK_OK(run(zeros, 3, 4, &out, &mem, err), err);
    CHECK(out && memcmp(out, g_w + 60, 4) == 0);
    pc_mem_free(&mem, out);

    /* A subdirectory. */
    const pc_kv sub[] = {{"location", "sub/d.bin"}, {"offset", "0"}, {"length", "16"}};
    CHECK_OK(run(sub, 3, sizeof g_d, &out, &mem, err), err);
    CHECK(out && memcmp(out, g_d, sizeof g_d) == 0);
    pc_mem_free(&mem, out);

    /* expected_bytes 0: a valid (1-byte) allocation, also for an empty file and offset == file size. */
    const pc_kv zero1[] = {{"location", "empty.bin"}};
    CHECK_OK(run(zero1, 1, 0, &out, &mem, err), err);
    pc_mem_free(&mem, out);
    const pc_kv zero2[] = {{"location", "w.bin"}, {"offset", "64"}, {"length", "0"}};
    CHECK_OK(run(zero2, 3, 0, &out, &mem, err), err);
    pc_mem_free(&mem, out);

    /* base_dir itself is trusted and may be reached through a symlink. */
    char lsub[256];
    path_of(lsub, sizeof lsub, "lsub");
    const pc_kv in_lsub[] = {{"location", "d.bin"}};
    out = NULL;
    CHECK_OK(pc_extdata_read(lsub, in_lsub, 1, sizeof g_d, &mem, &out, err), err);
    CHECK(out && memcmp(out, g_d, sizeof g_d) == 0);
    pc_mem_free(&mem, out);

    CHECK(mem.used == 0);
}

static void test_location(void)
{
    const pc_kv missing[] = {{"offset", "0"}};
    EXPECT_REJECT(missing, 4, PC_ERR_EXTERNAL_DATA, "'location'", "missing");
    const pc_kv empty[] = {{"location", ""}};
    EXPECT_REJECT(empty, 4, PC_ERR_EXTERNAL_DATA, "'location' value ''", "empty");
    const pc_kv abs1[] = {{"location", "/etc/passwd"}};
    EXPECT_REJECT(abs1, 4, PC_ERR_EXTERNAL_DATA, "'/etc/passwd'", "absolute");
    char abs_path[256]; /* an absolute path to a file that IS inside base_dir: still rejected */
    path_of(abs_path, sizeof abs_path, "w.bin");
    const pc_kv abs2[] = {{"location", abs_path}};
    EXPECT_REJECT(abs2, 4, PC_ERR_EXTERNAL_DATA, "absolute", NULL);
    const pc_kv bs[] = {{"location", "sub\\d.bin"}};
    EXPECT_REJECT(bs, 16, PC_ERR_EXTERNAL_DATA, "'sub\\\\d.bin'", "backslash");
    const pc_kv drive1[] = {{"location", "C:x"}};
    EXPECT_REJECT(drive1, 4, PC_ERR_EXTERNAL_DATA, "'C:x'", "drive");
    const pc_kv drive2[] = {{"location", "c:/w.bin"}};
    EXPECT_REJECT(drive2, 4, PC_ERR_EXTERNAL_DATA, "drive", NULL);
    const pc_kv dd1[] = {{"location", "a/../b"}};
    EXPECT_REJECT(dd1, 4, PC_ERR_EXTERNAL_DATA, "'a/../b'", "'..'");
    const pc_kv dd2[] = {{"location", "../x"}};
    EXPECT_REJECT(dd2, 4, PC_ERR_EXTERNAL_DATA, "'../x'", "'..'");
    const pc_kv dd3[] = {{"location", "sub/../w.bin"}}; /* would resolve inside base_dir: still rejected */
    EXPECT_REJECT(dd3, 4, PC_ERR_EXTERNAL_DATA, "'..'", NULL);
    const pc_kv dd4[] = {{"location", "sub/.."}};
    EXPECT_REJECT(dd4, 4, PC_ERR_EXTERNAL_DATA, "'..'", NULL);
    const pc_kv dd5[] = {{"location", ".."}};
    EXPECT_REJECT(dd5, 4, PC_ERR_EXTERNAL_DATA, "'..'", NULL);
    /* Decision: "." components are rejected, not normalized away. */
    const pc_kv dot1[] = {{"location", "./w.bin"}};
    EXPECT_REJECT(dot1, 4, PC_ERR_EXTERNAL_DATA, "'./w.bin'", "'.' path component");
    const pc_kv dot2[] = {{"location", "sub/./d.bin"}};
    EXPECT_REJECT(dot2, 16, PC_ERR_EXTERNAL_DATA, "'.' path component", NULL);
    const pc_kv dot3[] = {{"location", "."}};
    EXPECT_REJECT(dot3, 4, PC_ERR_EXTERNAL_DATA, "'.' path component", NULL);
    /* Names that merely start with dots are ordinary names. */
    const pc_kv dotname[] = {{"location", "...x"}};
    EXPECT_REJECT(dotname, 4, PC_ERR_EXTERNAL_DATA, "No such file", NULL);
    /* Empty components. */
    const pc_kv e1[] = {{"location", "sub//d.bin"}};
    EXPECT_REJECT(e1, 16, PC_ERR_EXTERNAL_DATA, "empty path component", NULL);
    const pc_kv e2[] = {{"location", "sub/"}};
    EXPECT_REJECT(e2, 16, PC_ERR_EXTERNAL_DATA, "empty path component", NULL);
    /* ORT's in-memory sentinel and anything like it. */
    const pc_kv ort1[] = {{"location", "*/_ORT_MEM_ADDR_/*"}, {"offset", "140737488355328"}};
    EXPECT_REJECT(ort1, 4, PC_ERR_EXTERNAL_DATA, "'*/_ORT_MEM_ADDR_/*'", "sentinel");
    const pc_kv ort2[] = {{"location", "x_ORT_MEM_ADDR_y"}};
    EXPECT_REJECT(ort2, 4, PC_ERR_EXTERNAL_DATA, "sentinel", NULL);
    /* Control characters (NUL cannot reach us inside a C string; the prescan rejects it in the protobuf). */
    const pc_kv ctl1[] = {{"location", "w\n.bin"}};
    EXPECT_REJECT(ctl1, 4, PC_ERR_EXTERNAL_DATA, "'w\\x0a.bin'", "control character 0x0a");
    const pc_kv ctl2[] = {{"location", "w.bin\x7f"}};
    EXPECT_REJECT(ctl2, 4, PC_ERR_EXTERNAL_DATA, "control character 0x7f", NULL);
}

static void test_filesystem(void)
{
    const pc_kv sym[] = {{"location", "link.bin"}};
    EXPECT_REJECT(sym, 64, PC_ERR_EXTERNAL_DATA, "'link.bin'", "symlink");
    const pc_kv sym_out[] = {{"location", "out.bin"}};
    EXPECT_REJECT(sym_out, 4, PC_ERR_EXTERNAL_DATA, "symlink", NULL);
    const pc_kv sym_parent[] = {{"location", "lsub/d.bin"}};
    EXPECT_REJECT(sym_parent, 16, PC_ERR_EXTERNAL_DATA, "'lsub/d.bin'", "'lsub' is a symlink");
    const pc_kv dir[] = {{"location", "sub"}};
    EXPECT_REJECT(dir, 4, PC_ERR_EXTERNAL_DATA, "'sub'", "directory");

    /* A FIFO must be rejected without opening it (an open for reading would block forever): the alarm kills
     * the test if it does block. */
    alarm(20);
    const pc_kv fifo[] = {{"location", "fifo"}};
    EXPECT_REJECT(fifo, 4, PC_ERR_EXTERNAL_DATA, "'fifo'", "FIFO");
    alarm(0);

    const pc_kv hl1[] = {{"location", "h1.bin"}};
    EXPECT_REJECT(hl1, 16, PC_ERR_EXTERNAL_DATA, "'h1.bin'", "2 hard links");
    const pc_kv hl2[] = {{"location", "h2.bin"}};
    EXPECT_REJECT(hl2, 16, PC_ERR_EXTERNAL_DATA, "hard links", NULL);

    /* Decision: a location that does not exist is a defect of the model -> PC_ERR_EXTERNAL_DATA. */
    const pc_kv nx1[] = {{"location", "nope.bin"}};
    EXPECT_REJECT(nx1, 4, PC_ERR_EXTERNAL_DATA, "'nope.bin'", "No such file");
    const pc_kv nx2[] = {{"location", "nodir/x.bin"}};
    EXPECT_REJECT(nx2, 4, PC_ERR_EXTERNAL_DATA, "'nodir'", NULL);
    const pc_kv nx3[] = {{"location", "w.bin/x"}}; /* a file used as a directory */
    EXPECT_REJECT(nx3, 4, PC_ERR_EXTERNAL_DATA, "'w.bin'", "Not a directory");

    /* base_dir that cannot be opened: not the model's fault -> PC_ERR_IO. */
    pc_mem mem = {0};
    pc_error err_store = {0}, *err = &err_store;
    void *out = NULL;
    const pc_kv good[] = {{"location", "w.bin"}};
    char bad_base[256];
    path_of(bad_base, sizeof bad_base, "no-such-dir");
    CHECK_STATUS(pc_extdata_read(bad_base, good, 1, 4, &mem, &out, err), PC_ERR_IO, err);
    CHECK(out == NULL);
    CHECK(strstr(err->message, "base directory") != NULL);

    /* Model loaded from memory. */
    CHECK_STATUS(pc_extdata_read(NULL, good, 1, 4, &mem, &out, err), PC_ERR_EXTERNAL_DATA, err);
    CHECK(out == NULL);
    CHECK(strstr(err->message, "model loaded from memory has no base directory") != NULL);
    CHECK(strstr(err->message, "'w.bin'") != NULL);
    CHECK(mem.used == 0 && mem.n_allocs == 0);
}

/* Every malformed number is rejected for both offset and length. */
static void test_numbers(void)
{
    static const char *const bad[] = {"-1",
                                      "+5",
                                      " 5",
                                      "5 ",
                                      "0x10",
                                      "5abc",
                                      "",
                                      "1e3",
                                      "5.0",
                                      "99999999999999999999", /* 20 digits */
                                      "9223372036854775808",  /* INT64_MAX + 1 */
                                      "9999999999999999999",  /* 19 digits, > INT64_MAX */
                                      "00000000000000000001", /* 20 digits even if small */
                                      "\xd9\xa1"};            /* ARABIC-INDIC DIGIT ONE */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad[i]);
        const pc_kv off[] = {{"location", "w.bin"}, {"offset", bad[i]}};
        EXPECT_REJECT(off, 4, PC_ERR_EXTERNAL_DATA, "'offset'", quoted);
        const pc_kv len[] = {{"location", "w.bin"}, {"length", bad[i]}};
        EXPECT_REJECT(len, 4, PC_ERR_EXTERNAL_DATA, "'length'", quoted);
    }
}

static void test_ranges(void)
{
    const pc_kv past[] = {{"location", "w.bin"}, {"offset", "65"}};
    EXPECT_REJECT(past, 0, PC_ERR_EXTERNAL_DATA, "'offset' value '65'", "past the end");
    const pc_kv huge[] = {{"location", "w.bin"}, {"offset", "9223372036854775807"}};
    EXPECT_REJECT(huge, 1, PC_ERR_EXTERNAL_DATA, "past the end", NULL);
    const pc_kv over[] = {{"location", "w.bin"}, {"offset", "60"}, {"length", "8"}};
    EXPECT_REJECT(over, 8, PC_ERR_EXTERNAL_DATA, "'length' value '8'", "past the end");
    const pc_kv over_nolen[] = {{"location", "w.bin"}, {"offset", "60"}};
    EXPECT_REJECT(over_nolen, 8, PC_ERR_EXTERNAL_DATA, "'w.bin'", "needs 8");
    const pc_kv too_big[] = {{"location", "w.bin"}};
    EXPECT_REJECT(too_big, 65, PC_ERR_EXTERNAL_DATA, "needs 65", NULL);
    const pc_kv mismatch[] = {{"location", "w.bin"}, {"length", "32"}};
    EXPECT_REJECT(mismatch, 31, PC_ERR_EXTERNAL_DATA, "'length' value '32'", "expected size of 31");
    /* offset + length would overflow int64 if added: must be a range error, never an allocation. */
    if ((uint64_t)SIZE_MAX >= (uint64_t)INT64_MAX) {
        const pc_kv ovf[] = {
            {"location", "w.bin"}, {"offset", "9223372036854775807"}, {"length", "9223372036854775807"}};
        EXPECT_REJECT(ovf, (size_t)INT64_MAX, PC_ERR_EXTERNAL_DATA, "past the end", NULL);
        const pc_kv ovf2[] = {{"location", "w.bin"}, {"offset", "1"}, {"length", "9223372036854775807"}};
        EXPECT_REJECT(ovf2, (size_t)INT64_MAX, PC_ERR_EXTERNAL_DATA, "past the end", NULL);
    }
}

static void test_keys(void)
{
    const pc_kv dup_loc[] = {{"location", "w.bin"}, {"location", "sub/d.bin"}};
    EXPECT_REJECT(dup_loc, 4, PC_ERR_EXTERNAL_DATA, "'location' value 'sub/d.bin'", "duplicate");
    const pc_kv dup_off[] = {{"location", "w.bin"}, {"offset", "0"}, {"offset", "4"}};
    EXPECT_REJECT(dup_off, 4, PC_ERR_EXTERNAL_DATA, "'offset' value '4'", "duplicate");
    const pc_kv dup_ck[] = {{"location", "w.bin"}, {"checksum", "a"}, {"checksum", "b"}};
    EXPECT_REJECT(dup_ck, 4, PC_ERR_EXTERNAL_DATA, "'checksum'", "duplicate");
    const pc_kv unk[] = {{"location", "w.bin"}, {"basepath", "/etc"}};
    EXPECT_REJECT(unk, 4, PC_ERR_EXTERNAL_DATA, "'basepath' value '/etc'", "unknown key");
    const pc_kv unk_case[] = {{"Location", "w.bin"}};
    EXPECT_REJECT(unk_case, 4, PC_ERR_EXTERNAL_DATA, "'Location'", "unknown key");
    const pc_kv null_key[] = {{NULL, "w.bin"}, {"location", "w.bin"}};
    EXPECT_REJECT(null_key, 4, PC_ERR_EXTERNAL_DATA, "no key", NULL);
    const pc_kv null_value[] = {{"location", NULL}};
    EXPECT_REJECT(null_value, 4, PC_ERR_EXTERNAL_DATA, "'location'", "no value");

    pc_mem mem = {0};
    pc_error err_store = {0}, *err = &err_store;
    void *out = NULL;
    CHECK_STATUS(pc_extdata_read(g_dir, NULL, 0, 4, &mem, &out, err), PC_ERR_EXTERNAL_DATA, err);
    CHECK(strstr(err->message, "missing") != NULL);
}

static void test_memory(void)
{
    const pc_kv good[] = {{"location", "w.bin"}};
    pc_error err_store = {0}, *err = &err_store;
    void *out = NULL;

    /* Budget smaller than the payload. */
    pc_mem small = {.budget = 32};
    CHECK_STATUS(run(good, 1, 64, &out, &small, err), PC_ERR_BUDGET, err);
    CHECK(small.over_budget);
    CHECK(small.used == 0);
    CHECK(strstr(err->message, "64 bytes") != NULL);

    /* Budget exactly large enough for the path scratch copy and then the payload. */
    pc_mem exact = {.budget = 64};
    CHECK_OK(run(good, 1, 64, &out, &exact, err), err);
    CHECK(out && memcmp(out, g_w, 64) == 0);
    pc_mem_free(&exact, out);

    /* Injected failures: every allocation of the function, one after another, gives NOMEM and no leak. */
    for (uint64_t n = 1;; n++) {
        pc_mem inj = {.fail_after = n};
        pc_status st = run(good, 1, 64, &out, &inj, err);
        if (st == PC_OK) {
            CHECK(n > 1);
            pc_mem_free(&inj, out);
            break;
        }
        CHECK_STATUS(st, PC_ERR_NOMEM, err);
        CHECK(inj.used == 0);
        if (n > 10) {
            CHECK(!"allocation injection never succeeded");
            break;
        }
    }
}

int main(void)
{
    int fd_before = fd_probe();
    setup();
    test_good();
    test_location();
    test_filesystem();
    test_numbers();
    test_ranges();
    test_keys();
    test_memory();
    CHECK_MSG(fd_probe() == fd_before, "fd leak: lowest free fd %d, was %d", fd_probe(), fd_before);
    cleanup();
    return pc_test_finish("test_onnx_extdata");
}
