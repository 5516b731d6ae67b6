import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { findBinary } from './sandbox.js';

/**
 * The launcher of launcher.ts in C. Same command line (`CPU_SECONDS DATA_BYTES FILE_BYTES SUBREAPER NPROC NOFILE ARGV...`), same
 * JSON lines on fd 3, same exit status. It exists for speed only: a Python launcher pays a second interpreter
 * start-up on every run, which the benchmark shows as most of the executor's overhead; this one costs an exec.
 * Built once per host with the system C compiler and cached by the hash of its source; without a compiler the
 * Python launcher is used.
 */
export const NATIVE_LAUNCHER_SOURCE = String.raw`#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *SIGNAMES[] = {"", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE",
  "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
  "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
  "SIGIO", "SIGPWR", "SIGSYS"};

static void say(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(3, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void cap(int res, rlim_t soft, rlim_t hard) {
  struct rlimit cur;
  if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    if (soft > cur.rlim_max) soft = cur.rlim_max;
    if (hard > cur.rlim_max) hard = cur.rlim_max;
  }
  struct rlimit r = {soft, hard};
  setrlimit(res, &r);
}

/* Kills and reaps every child of ours (orphans re-parented to us as subreaper); returns how many there were. */
static int kill_children(void) {
  pid_t me = getpid(), kids[4096];
  int n = 0;
  DIR *d = opendir("/proc");
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 4096) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) continue;
    buf[len] = 0;
    char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2) continue;
    if (ppid == me) kids[n++] = (pid_t)atoi(e->d_name);
  }
  closedir(d);
  for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
  for (int i = 0; i < n; i++) waitpid(kids[i], NULL, 0);
  return n;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s CPU_SECONDS DATA_BYTES FILE_BYTES SUBREAPER NPROC NOFILE ARGV...\n", argv[0]);
    return 127;
  }
  /* Not dumpable: a script of the same uid can neither ptrace us nor open /proc/<pid>/fd/3 to forge the report. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  rlim_t cpu = strtoull(argv[1], NULL, 10), data = strtoull(argv[2], NULL, 10), fsize = strtoull(argv[3], NULL, 10);
  int subreaper = argv[4][0] == '1';
  rlim_t nproc = strtoull(argv[5], NULL, 10), nofile = strtoull(argv[6], NULL, 10);
  /* As the namespace's pid 1 (bwrap --as-pid-1) orphans come to us: reap them while waiting for the script. */
  int reap_all = subreaper || getpid() == 1;
  fcntl(3, F_SETFD, FD_CLOEXEC);
  say("{\"started\": true}\n");
  if (subreaper) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  pid_t pid = fork();
  if (pid == 0) {
    cap(RLIMIT_CPU, cpu, cpu + (cpu / 10 > 1 ? cpu / 10 : 1));
    cap(RLIMIT_DATA, data, data);
    cap(RLIMIT_CORE, 0, 0);
    cap(RLIMIT_FSIZE, fsize, fsize);
    cap(RLIMIT_NPROC, nproc, nproc);
    cap(RLIMIT_NOFILE, nofile, nofile);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    /* Only stdin/out/err reach the script: fds our own parent leaked to us stay here (fd 3 is close-on-exec). */
    if (syscall(SYS_close_range, 4, ~0U, 0) != 0) {
      for (int fd = 4; fd < 65536; fd++) close(fd);
    }
    execv(argv[7], argv + 7);
    int err = errno;
    char msg[600], safe[400];
    snprintf(safe, sizeof safe, "%s", argv[7]);
    for (char *c = safe; *c; c++) if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '_';
    snprintf(msg, sizeof msg, "{\"execError\": \"%s: %s\"}\n", safe, strerror(err));
    say(msg);
    fprintf(stderr, "repgen: cannot execute %s: %s\n", argv[7], strerror(err));
    _exit(127);
  }
  if (pid < 0) {
    char msg[200];
    snprintf(msg, sizeof msg, "{\"execError\": \"fork: %s\"}\n", strerror(errno));
    say(msg);
    return 127;
  }
  int status;
  struct rusage ru;
  for (;;) {
    pid_t got = wait4(reap_all ? -1 : pid, &status, 0, &ru);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return 127;
  }
  if (subreaper) for (int i = 0; i < 100 && kill_children() > 0; i++) {}
  double cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
                  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
  char out[300];
  if (WIFSIGNALED(status)) {
    int n = WTERMSIG(status);
    char name[32];
    if (n > 0 && n < (int)(sizeof SIGNAMES / sizeof SIGNAMES[0])) snprintf(name, sizeof name, "%s", SIGNAMES[n]);
    else snprintf(name, sizeof name, "SIG%d", n);
    snprintf(out, sizeof out, "{\"exitCode\": null, \"signal\": \"%s\", \"cpuMs\": %.3f, \"maxRssKb\": %ld}\n", name, cpu_ms, ru.ru_maxrss);
    say(out);
    return 128 + n;
  }
  snprintf(out, sizeof out, "{\"exitCode\": %d, \"signal\": null, \"cpuMs\": %.3f, \"maxRssKb\": %ld}\n", WEXITSTATUS(status), cpu_ms, ru.ru_maxrss);
  say(out);
  return WEXITSTATUS(status);
}
`;

/** Where and why a native launcher could not be had (the Python one is used instead). */
export type NativeLauncher = { path: string } | { path: null; reason: string };

const cache = new Map<string, Promise<NativeLauncher>>();

/**
 * Returns the compiled launcher under `cacheRoot`, compiling it if needed. The cache folder must be ours and
 * writable by us alone: a binary every run executes must not be replaceable by another user of a shared /tmp.
 */
export function ensureNativeLauncher(cacheRoot: string): Promise<NativeLauncher> {
  let found = cache.get(cacheRoot);
  if (!found) {
    found = buildNativeLauncher(cacheRoot);
    cache.set(cacheRoot, found);
  }
  return found;
}

async function buildNativeLauncher(cacheRoot: string): Promise<NativeLauncher> {
  const uid = process.getuid?.() ?? -1;
  const hash = createHash('sha256').update(NATIVE_LAUNCHER_SOURCE).digest('hex').slice(0, 16);
  const dir = join(cacheRoot, `repgen-launcher-${uid}`);
  const path = join(dir, `launcher-${hash}`);
  try {
    // Readable by all (bwrap runs as an unprivileged uid when we are root), writable by us alone.
    await mkdir(dir, { mode: 0o755 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    let st = await lstat(dir);
    if (st.isDirectory() && st.uid === uid && (st.mode & 0o777) === 0o700) {
      await chmod(dir, 0o755);
      st = await lstat(dir);
    }
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
      return { path: null, reason: `${dir} is not a private directory of this user` };
    }
    const existing = await lstat(path).catch(() => null);
    if (existing) {
      if (existing.isFile() && existing.uid === uid && (existing.mode & 0o022) === 0) return { path };
      return { path: null, reason: `${path} is not a private file of this user` };
    }
    const cc = findBinary('cc') ?? findBinary('gcc') ?? findBinary('clang');
    if (!cc) return { path: null, reason: 'no C compiler (cc, gcc, clang) found' };
    const tmp = `${path}.${process.pid}.tmp`;
    await compile(cc, tmp);
    await chmod(tmp, 0o755);
    // rename() is atomic: a concurrent process sees either no launcher or a complete one.
    await rename(tmp, path);
    return { path };
  } catch (err) {
    await rm(`${path}.${process.pid}.tmp`, { force: true }).catch(() => undefined);
    return { path: null, reason: `cannot build the native launcher: ${(err as Error).message.split('\n')[0]}` };
  }
}

function compile(cc: string, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(cc, ['-O2', '-x', 'c', '-o', out, '-'], { timeout: 60_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(String(stderr).trim() || err.message));
      else resolve();
    });
    child.stdin?.end(NATIVE_LAUNCHER_SOURCE);
  });
}
