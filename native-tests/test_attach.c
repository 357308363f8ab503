/* test_attach.c - the attach client: /proc inspection, the library checks, and the `load` exchange against a
 * listener that answers as HotSpot does (the replies of JDK 17 and 25 for each case, byte for byte); the socket
 * refused before anything is sent when it is not the JVM's (another owner, open to others, served by another
 * process), and paths in a container kept inside its root. The whole handshake against real JVMs is in the JVM
 * tests (AttachChecks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/attach.h"

#define UNUSED __attribute__((unused))

/* A one-shot listener at /tmp/.java_pid<our pid>: reads one request, answers `reply` (reply_len bytes). */
typedef struct {
    int fd;
    const char *reply;
    size_t reply_len;
    char request[4096];
    size_t request_len;
    pthread_t thread;
} fake_jvm;

static void sock_path(char *buf, size_t len)
{
    snprintf(buf, len, "/tmp/.java_pid%d", (int)getpid());
}

/* Reads until five NUL-terminated strings arrived (the v1 request), then answers reply and closes; 0, or -1 after 5 s
 * without a connection (a client that refused the socket never comes). */
static int serve_one(fake_jvm *f, const char *reply, size_t len, int wait_ms)
{
    struct pollfd p = {.fd = f->fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) != 1) return -1;
    int c = accept(f->fd, NULL, NULL);
    if (c < 0) return -1;
    int nuls = 0;
    f->request_len = 0;
    while (nuls < 5 && f->request_len < sizeof f->request) {
        ssize_t r = read(c, f->request + f->request_len, sizeof f->request - f->request_len);
        if (r <= 0) break;
        for (ssize_t i = 0; i < r; i++) nuls += f->request[f->request_len + (size_t)i] == 0;
        f->request_len += (size_t)r;
    }
    if (len && write(c, reply, len) < 0) perror("write");
    close(c);
    return 0;
}

static void *serve(void *arg)
{
    fake_jvm *f = arg;
    serve_one(f, f->reply, f->reply_len, 5000);
    return NULL;
}

/* A JVM still starting: its first two answers say agents load only once it is live, the third loads one. */
static const char not_live[] = "0\nDynamic agent loading is only permitted in the live phase\n";
static void *serve_starting(void *arg)
{
    fake_jvm *f = arg;
    for (int i = 0; i < 2; i++)
        if (serve_one(f, not_live, sizeof not_live - 1, 5000) != 0) return NULL;
    serve_one(f, f->reply, f->reply_len, 5000);
    return NULL;
}

/* A JVM that never gets live: every answer says so, until no client came for 1 s. */
static void *serve_never_live(void *arg)
{
    fake_jvm *f = arg;
    while (serve_one(f, not_live, sizeof not_live - 1, 1000) == 0) {
    }
    return NULL;
}

static void fake_start_with(fake_jvm *f, const char *reply, size_t len, void *(*fn)(void *));

static void fake_start(fake_jvm *f, const char *reply, size_t len)
{
    fake_start_with(f, reply, len, serve);
}

/* Listens at the attach socket and serves it with fn on a thread of its own. */
static void fake_start_with(fake_jvm *f, const char *reply, size_t len, void *(*fn)(void *))
{
    memset(f, 0, sizeof *f);
    f->reply = reply;
    f->reply_len = len;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    sock_path(a.sun_path, sizeof a.sun_path);
    unlink(a.sun_path);
    f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(chmod(a.sun_path, 0600), 0); /* as HotSpot leaves it */
    assert_int_equal(listen(f->fd, 1), 0);
    assert_int_equal(pthread_create(&f->thread, NULL, fn, f), 0);
}

static void fake_stop(fake_jvm *f)
{
    pthread_join(f->thread, NULL);
    close(f->fd);
    char p[108];
    sock_path(p, sizeof p);
    unlink(p);
}

/* Runs one load against a fake JVM answering reply; returns the code, fills rc/err. */
static js_attach_code load_with(const char *reply, size_t len, fake_jvm *f, int *rc, char *err, size_t errlen)
{
    fake_start(f, reply, len);
    js_target t;
    char e[256];
    assert_int_equal(js_target_inspect((int)getpid(), &t, e, sizeof e), JS_AT_OK);
    assert_true(t.listening);
    char text[512];
    js_attach_code c = js_attach_load(&t, "/abs/libjsampler.so", "start,event=cpu", 2000, rc, text, sizeof text, err,
                                      errlen);
    fake_stop(f);
    return c;
}

/* The request is protocol v1: "1" load path "true" options, each NUL-terminated. */
static void test_request_bytes_and_return_code(void **state UNUSED)
{
    static const char reply[] = "0\nreturn code: 0\n";
    fake_jvm f;
    int rc = -7;
    char err[256] = "";
    assert_int_equal(load_with(reply, sizeof reply - 1, &f, &rc, err, sizeof err), JS_AT_OK);
    assert_int_equal(rc, 0);
    static const char want[] = "1\0load\0/abs/libjsampler.so\0true\0start,event=cpu\0";
    assert_int_equal(f.request_len, sizeof want - 1);
    assert_memory_equal(f.request, want, sizeof want - 1);
}

/* Agent_OnAttach's non-zero result comes back as the agent's code, not as an attach failure. */
static void test_agent_code(void **state UNUSED)
{
    static const char reply[] = "0\nreturn code: 5\n";
    fake_jvm f;
    int rc = 0;
    char err[256] = "";
    assert_int_equal(load_with(reply, sizeof reply - 1, &f, &rc, err, sizeof err), JS_AT_OK);
    assert_int_equal(rc, 5);
}

/* A library the JVM cannot load: JDK 17 answers -1, JDK 25 answers 0; both are a library error. */
static void test_library_not_loaded(void **state UNUSED)
{
    static const char jdk17[] = "-1\n/abs/libjsampler.so was not loaded.\n/abs/libjsampler.so: cannot open shared "
                                "object file: No such file or directory\n";
    static const char jdk25[] = "0\n/abs/libjsampler.so was not loaded.\n/abs/libjsampler.so: cannot open shared "
                                "object file: No such file or directory\n";
    const char *replies[] = {jdk17, jdk25};
    size_t lens[] = {sizeof jdk17 - 1, sizeof jdk25 - 1};
    for (int i = 0; i < 2; i++) {
        fake_jvm f;
        int rc = 0;
        char err[512] = "";
        assert_int_equal(load_with(replies[i], lens[i], &f, &rc, err, sizeof err), JS_AT_LIBRARY);
        assert_non_null(strstr(err, "could not load the agent library"));
        assert_non_null(strstr(err, "was not loaded"));
    }
}

/* -XX:-EnableDynamicAgentLoading: named, with the fix. */
static void test_dynamic_loading_disabled(void **state UNUSED)
{
    static const char reply[] = "0\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to "
                                "launch target VM.\n";
    fake_jvm f;
    int rc = 0;
    char err[512] = "";
    assert_int_equal(load_with(reply, sizeof reply - 1, &f, &rc, err, sizeof err), JS_AT_PROTOCOL);
    assert_non_null(strstr(err, "EnableDynamicAgentLoading"));
}

/* A JVM not yet live is asked again within the timeout, and the agent it then loads is what comes back; one that
 * stays not live past the timeout is a protocol refusal naming the JVM's words. */
static void test_not_live_yet_asked_again(void **state UNUSED)
{
    static const char reply[] = "0\nreturn code: 0\n";
    fake_jvm f;
    fake_start_with(&f, reply, sizeof reply - 1, serve_starting);
    js_target t;
    char e[256], text[512], err[256] = "";
    int rc = -7;
    assert_int_equal(js_target_inspect((int)getpid(), &t, e, sizeof e), JS_AT_OK);
    assert_int_equal(js_attach_load(&t, "/abs/libjsampler.so", "start", 2000, &rc, text, sizeof text, err, sizeof err),
                     JS_AT_OK);
    assert_int_equal(rc, 0);
    fake_stop(&f);
    fake_start_with(&f, NULL, 0, serve_never_live);
    rc = -7;
    assert_int_equal(js_attach_load(&t, "/abs/libjsampler.so", "start", 500, &rc, text, sizeof text, err, sizeof err),
                     JS_AT_PROTOCOL);
    assert_non_null(strstr(err, "live phase"));
    fake_stop(&f);
}

/* A JVM that rejects our credentials closes the connection without a byte. */
static void test_silent_close_is_permission(void **state UNUSED)
{
    fake_jvm f;
    int rc = 0;
    char err[512] = "";
    assert_int_equal(load_with("", 0, &f, &rc, err, sizeof err), JS_AT_PERMISSION);
    assert_non_null(strstr(err, "without a reply"));
}

/* Arguments over the listener's 1024-byte limit are refused before sending (the JVM would drop them silently). */
static void test_argument_limit(void **state UNUSED)
{
    js_target t;
    char e[256], text[64], err[256];
    assert_int_equal(js_target_inspect((int)getpid(), &t, e, sizeof e), JS_AT_OK);
    char big[1100];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    int rc;
    assert_int_equal(js_attach_load(&t, "/abs/lib.so", big, 100, &rc, text, sizeof text, err, sizeof err),
                     JS_AT_LIBRARY);
    assert_non_null(strstr(err, "1024"));
}

/* /proc facts about ourselves; a missing pid; SIGQUIT caught or not. */
static void test_inspect(void **state UNUSED)
{
    js_target t;
    char err[256];
    assert_int_equal(js_target_inspect((int)getpid(), &t, err, sizeof err), JS_AT_OK);
    assert_int_equal(t.uid, geteuid());
    assert_int_equal(t.gid, getegid());
    assert_int_equal(t.is_jvm, 0);
    assert_int_equal(t.other_mnt, 0);
    assert_true(t.nspid > 0);
    signal(SIGQUIT, SIG_IGN);
    assert_int_equal(js_target_inspect((int)getpid(), &t, err, sizeof err), JS_AT_OK);
    assert_false(t.catches_quit);
    signal(SIGQUIT, SIG_DFL);
    assert_int_equal(js_target_inspect(-1, &t, err, sizeof err), JS_AT_NO_PROCESS);
    assert_non_null(strstr(err, "no such process"));
}

/* Library paths: relative refused, unreadable refused, readable used as is (same mount namespace). */
static void test_place_library(void **state UNUSED)
{
    js_target t;
    char err[512], where[256];
    assert_int_equal(js_target_inspect((int)getpid(), &t, err, sizeof err), JS_AT_OK);
    assert_int_equal(js_attach_place_library(&t, "build/libjsampler.so", where, sizeof where, err, sizeof err),
                     JS_AT_LIBRARY);
    assert_non_null(strstr(err, "not absolute"));
    assert_int_equal(js_attach_place_library(&t, "/nonexistent/libx.so", where, sizeof where, err, sizeof err),
                     JS_AT_LIBRARY);
    assert_non_null(strstr(err, "not readable"));
    assert_int_equal(js_attach_place_library(&t, "/proc/self/exe", where, sizeof where, err, sizeof err), JS_AT_OK);
    assert_string_equal(where, "/proc/self/exe");
}

/* As the same user nothing changes. */
static void test_become_self(void **state UNUSED)
{
    js_target t;
    char err[256];
    assert_int_equal(js_target_inspect((int)getpid(), &t, err, sizeof err), JS_AT_OK);
    assert_int_equal(js_attach_become(&t, err, sizeof err), JS_AT_OK);
    assert_int_equal(geteuid(), t.uid);
}

/* Runs one load against our own pid with the socket already set up by the caller; returns the code. */
static js_attach_code load_self(char *err, size_t errlen)
{
    js_target t;
    char e[256], text[512];
    int rc;
    assert_int_equal(js_target_inspect((int)getpid(), &t, e, sizeof e), JS_AT_OK);
    return js_attach_load(&t, "/abs/libjsampler.so", "start,token=s3cret", 2000, &rc, text, sizeof text, err, errlen);
}

/* A socket at the attach path that another user owns (one who won the race to /tmp): refused before a byte is
 * sent, the options (which may carry a token) never leave. */
static void test_socket_of_another_user_refused(void **state UNUSED)
{
    if (geteuid() != 0) {
        print_message("skipped: needs root to give the socket another owner\n");
        skip();
    }
    fake_jvm f;
    fake_start(&f, "0\nreturn code: 0\n", 17);
    char p[108], err[512] = "";
    sock_path(p, sizeof p);
    assert_int_equal(chown(p, 65534, 65534), 0);
    assert_int_equal(load_self(err, sizeof err), JS_AT_PERMISSION);
    fake_stop(&f);
    assert_non_null(strstr(err, "belongs to another user"));
    assert_int_equal(f.request_len, 0);
}

/* A socket made before the target started (left by an earlier process with this pid, killed before removing it; its
 * time set back here): removed, and the listener is started as if there were none; here the target (this test,
 * which does not handle SIGQUIT) is then refused for that reason, never with the dead socket's "connection
 * refused". A socket made since the target started is the target's: left alone (the other tests). */
static void test_dead_socket_of_an_earlier_process(void **state UNUSED)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    sock_path(a.sun_path, sizeof a.sun_path);
    unlink(a.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(chmod(a.sun_path, 0600), 0);
    close(fd); /* the file stays; nothing listens */
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}}; /* 2001: before this process started */
    assert_int_equal(utimensat(AT_FDCWD, a.sun_path, old, AT_SYMLINK_NOFOLLOW), 0);
    char err[512] = "";
    assert_int_equal(load_self(err, sizeof err), JS_AT_PROTOCOL);
    assert_non_null(strstr(err, "SIGQUIT"));
    assert_null(strstr(err, "refused"));
    struct stat st;
    assert_int_not_equal(lstat(a.sun_path, &st), 0);
}

/* A socket that group or others may use is not the JVM's (HotSpot makes it 600): refused, as jcmd does. */
static void test_socket_open_to_others_refused(void **state UNUSED)
{
    fake_jvm f;
    fake_start(&f, "0\nreturn code: 0\n", 17);
    char p[108], err[512] = "";
    sock_path(p, sizeof p);
    assert_int_equal(chmod(p, 0666), 0);
    assert_int_equal(load_self(err, sizeof err), JS_AT_PERMISSION);
    fake_stop(&f);
    assert_non_null(strstr(err, "group or others"));
    assert_int_equal(f.request_len, 0);
}

/* The right file, served by another process (it replaced the socket between our check and our connect, or
 * listens on a file it made look right): SO_PEERCRED shows it and nothing is sent. */
static void test_socket_served_by_another_process(void **state UNUSED)
{
    char p[108];
    sock_path(p, sizeof p);
    unlink(p);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the impostor: listens at our attach path, reports how many bytes it was sent */
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(p, 0600) != 0 || listen(fd, 1) != 0)
            _exit(1);
        if (write(pipefd[1], "L", 1) != 1) _exit(1);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int got = 0;
        if (poll(&pf, 1, 5000) == 1) {
            int c = accept(fd, NULL, NULL);
            char buf[4096];
            ssize_t r;
            struct pollfd pc = {.fd = c, .events = POLLIN};
            while (poll(&pc, 1, 1000) == 1 && (r = read(c, buf, sizeof buf)) > 0) got += (int)r;
            if (got && write(c, "0\nreturn code: 0\n", 17) < 0) got = -got;
            close(c);
        }
        unsigned char n = (unsigned char)(got > 255 ? 255 : got);
        if (write(pipefd[1], &n, 1) != 1) _exit(1);
        _exit(0);
    }
    char ready;
    assert_int_equal(read(pipefd[0], &ready, 1), 1);
    char err[512] = "";
    assert_int_equal(load_self(err, sizeof err), JS_AT_PERMISSION);
    unsigned char sent = 99;
    assert_int_equal(read(pipefd[0], &sent, 1), 1);
    int status;
    waitpid(child, &status, 0);
    unlink(p);
    close(pipefd[0]);
    close(pipefd[1]);
    assert_non_null(strstr(err, "is served by process"));
    assert_int_equal(sent, 0);
}

/* A process in its own mount namespace, chrooted into root: the stand-in for a container. Returns its pid; it
 * waits to be killed. */
static pid_t fake_container(const char *root)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char ok = unshare(CLONE_NEWNS) == 0 && chroot(root) == 0 && chdir("/") == 0 ? 'Y' : 'N';
        if (write(pipefd[1], &ok, 1) != 1) _exit(1);
        for (;;) pause();
    }
    char ok = 0;
    assert_int_equal(read(pipefd[0], &ok, 1), 1);
    close(pipefd[0]);
    close(pipefd[1]);
    assert_int_equal(ok, 'Y');
    return child;
}

/* In a container whose /tmp is a symbolic link to an absolute path, that path is the container's, not ours: the
 * library copy goes inside the container's root, and a reply file or a profile file is looked for there only. */
static void test_container_links_stay_inside(void **state UNUSED)
{
    if (geteuid() != 0) {
        print_message("skipped: needs root for a mount namespace and chroot\n");
        skip();
    }
    char victim[64] = "/var/tmp/jsampler-victim-XXXXXX", root[64] = "/tmp/jsampler-croot-XXXXXX", path[256];
    assert_non_null(mkdtemp(victim));
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/tmp", root);
    assert_int_equal(symlink(victim, path), 0); /* the container's /tmp -> "/var/tmp/jsampler-victim-..." */
    snprintf(path, sizeof path, "%s%s", root, victim);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", path); /* where that link leads inside the container */
    assert_int_equal(system(cmd), 0);
    pid_t child = fake_container(root);
    js_target t;
    char err[512], where[256], reply[64];
    assert_int_equal(js_target_inspect(child, &t, err, sizeof err), JS_AT_OK);
    assert_int_equal(t.other_mnt, 1);
    snprintf(path, sizeof path, "%s/.jsampler-reply-1", victim); /* a file of ours where the link points */
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    fputs("0\nhost secret\n", f);
    fclose(f);
    assert_int_equal(js_attach_take_reply(&t, "/tmp/.jsampler-reply-1", reply, sizeof reply), -1);
    assert_string_equal(reply, "");
    snprintf(path, sizeof path, "%s/.jsampler-out-1", victim); /* a profile the CLI would copy to its stdout */
    f = fopen(path, "we");
    assert_non_null(f);
    fputs("host;secret 1\n", f);
    fclose(f);
    assert_int_equal(js_attach_take_file(&t, "/tmp/.jsampler-out-1"), -1);
    assert_int_equal(access(path, F_OK), 0); /* neither read nor removed */
    js_attach_code c = js_attach_place_library(&t, "/proc/self/exe", where, sizeof where, err, sizeof err);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (c != JS_AT_OK) print_error("%s\n", err);
    assert_int_equal(c, JS_AT_OK);
    assert_string_equal(where, "/tmp/exe");
    snprintf(path, sizeof path, "%s/exe", victim);
    assert_int_equal(access(path, F_OK), -1); /* nothing written on our side */
    snprintf(path, sizeof path, "%s%s/exe", root, victim);
    assert_int_equal(access(path, F_OK), 0); /* where the JVM in there looks */
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", victim, root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_bytes_and_return_code),
        cmocka_unit_test(test_agent_code),
        cmocka_unit_test(test_library_not_loaded),
        cmocka_unit_test(test_dynamic_loading_disabled),
        cmocka_unit_test(test_dead_socket_of_an_earlier_process),
        cmocka_unit_test(test_not_live_yet_asked_again),
        cmocka_unit_test(test_silent_close_is_permission),
        cmocka_unit_test(test_argument_limit),
        cmocka_unit_test(test_inspect),
        cmocka_unit_test(test_place_library),
        cmocka_unit_test(test_become_self),
        cmocka_unit_test(test_socket_of_another_user_refused),
        cmocka_unit_test(test_socket_open_to_others_refused),
        cmocka_unit_test(test_socket_served_by_another_process),
        cmocka_unit_test(test_container_links_stay_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
