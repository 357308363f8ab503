/* noperf.c - run a command with perf_event_open(2) refused, as a hardened container would refuse it.
 *
 *   noperf COMMAND [ARG...]   install the filter, then execvp COMMAND
 *   noperf --check            install the filter and verify perf_event_open now fails with EPERM
 *
 * A seccomp BPF filter (inherited across execve and by every thread) makes perf_event_open
 * (x86_64 syscall 298, and its x32 alias) fail with EPERM and allows every other system call.
 * System calls made through a foreign ABI (e.g. int 0x80, i386) fail with ENOSYS so the filter
 * cannot be bypassed. PR_SET_NO_NEW_PRIVS is set first, so no privilege is needed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "noperf: the filter is written for x86_64"
#endif

#define NR_PERF_EVENT_OPEN 298 /* x86_64 */
#define X32_SYSCALL_BIT 0x40000000u

static int install_filter(void)
{
    struct sock_filter code[] = {
        /* [0] A = arch; anything but x86_64 (e.g. i386 via int 0x80) is refused outright. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        /* [3] A = syscall number; perf_event_open (native or x32) gets EPERM. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_PERF_EVENT_OPEN, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_SYSCALL_BIT | NR_PERF_EVENT_OPEN, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* [7] */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {
        .len = (unsigned short)(sizeof code / sizeof code[0]),
        .filter = code,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "noperf: prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        fprintf(stderr, "noperf: prctl(PR_SET_SECCOMP): %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: noperf COMMAND [ARG...] | noperf --check\n");
        return 2;
    }
    if (install_filter() != 0) return 125;

    if (strcmp(argv[1], "--check") == 0) {
        /* Invalid arguments on purpose: without the filter this fails with EFAULT, never EPERM. */
        long rc = syscall(NR_PERF_EVENT_OPEN, NULL, 0, -1, -1, 0UL);
        if (rc == -1 && errno == EPERM) {
            printf("noperf: perf_event_open refused with EPERM\n");
            return 0;
        }
        fprintf(stderr, "noperf: filter not effective: perf_event_open returned %ld (%s)\n", rc,
                rc == -1 ? strerror(errno) : "no error");
        return 1;
    }

    execvp(argv[1], argv + 1);
    fprintf(stderr, "noperf: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
